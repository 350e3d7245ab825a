#!/usr/bin/perl
# One react conversation against each provider's wire format (OpenAI,
# Azure, Anthropic, Gemini): a turn with an image and a PDF that calls two
# tools at
# once (arguments split mid-JSON), then answers; a second turn.  Each
# scripted provider checks what it received: its path, its key header,
# the system prompt, the tools, the image, the tool calls and results in
# its own shapes, the same conversation in all four.  Then one
# conversation moved between providers mid-way, tool calls included.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use Wire qw(neutral);
use JSON::PP;

my $png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk'
        . '+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
# a PDF's first bytes ("%PDF-1.4\n"), as Agent Chat UI attaches one
my $pdf = 'JVBERi0xLjQKJcfsj6IK';
my $csv = "city,people\nOslo,700000\nBergen,285000\nTrondheim,212000\n";
my $query = 'SELECT COUNT(*) AS n FROM csv_data';
my $qjson = JSON::PP->new->canonical->encode({ query => $query });
my $key = 'sk-wire-secret-7';

# the answers, by request: two tool calls, the answer, the second answer
sub script {
    my ($body, $n) = @_;
    return { pieces => 5, usage => { prompt => 50, completion => 5 },
             tools => [ [ 'call_1', 'load_csv_data', '{}' ],
                        [ 'call_2', 'execute_sql_query', $qjson ] ] }
        if $n == 1;
    return { text => 'There are 3 cities.',
             usage => { prompt => 120, completion => 7, cached => 100 } }
        if $n == 2;
    return { text => 'You are welcome.',
             usage => { prompt => 140, completion => 4, cached => 120 } };
}

my %provider = (
    openai => [ 'openai', '/v1/chat/completions',
                'authorization', "Bearer $key" ],
    azure => [ 'openai',
               '/openai/deployments/dep1/chat/completions'
               . '?api-version=2024-10-21', 'api-key', $key ],
    anthropic => [ 'anthropic', '/v1/messages', 'x-api-key', $key ],
    gemini => [ 'gemini',
                '/v1beta/models/remote-1:streamGenerateContent?alt=sse',
                'x-goog-api-key', $key ],
);

my %seen;

for my $p (qw(openai azure anthropic gemini)) {
    my ($format, $path, $header, $value) = @{ $provider{$p} };
    my $t = AgentTest->new;
    my $mock = $t->mock(\&script, format => $format);
    my $base = 'http://127.0.0.1:%%MOCK%%';
    my $url = $p eq 'anthropic' ? $base
            : $p eq 'gemini' ? "$base/v1beta" : "$base$path";

    my $conf = $t->conf;
    $conf =~ s{agent_model mock [^;]*;}
              {agent_model m provider=$p url=$url model=remote-1 key_env=AGENT_TEST_KEY;};
    $conf =~ s/^(worker_processes)/env AGENT_TEST_KEY=$key;\n$1/m;
    $t->run($conf);

    my $sid = $t->session;
    my $r = $t->http('POST', "/api/sessions/$sid/resources?name=cities.csv",
                     $csv, 'Content-Type' => 'text/csv');
    is($r->{status}, 201, "$p: CSV uploaded");

    $r = $t->turn($sid, { message => 'How many cities?',
                          images => [ { mime_type => 'image/png',
                                        data => $png },
                                      { mime_type => 'application/pdf',
                                        data => $pdf } ] });
    is_deeply(AgentTest::plain($r), [qw(start tool_start tool_start
                                        tool_result tool_result end)],
              "$p: two tools, then the answer")
        or diag(explain $r->{events});
    my @starts = grep { $_->{type} eq 'tool_start' } @{ $r->{events} };
    is_deeply($starts[1]{input}, { query => $query },
              "$p: the arguments, cut mid-JSON, parsed whole");
    my ($res) = grep { $_->{type} eq 'tool_result'
                       && $_->{name} eq 'execute_sql_query' }
                @{ $r->{events} };
    is_deeply($res->{content}{rows}, [ [3] ], "$p: the query ran");
    my $end = $r->{events}[-1];
    is($end->{full_response}, 'There are 3 cities.', "$p: the answer");
    is(join('', map { $_->{content} } grep { $_->{type} eq 'chunk' }
                @{ $r->{events} }),
       'There are 3 cities.', "$p: streamed in chunks");
    is_deeply($end->{usage}, { prompt_tokens => 170, completion_tokens => 12,
                               cached_tokens => 100,
                               cache_creation_tokens => 0 },
              "$p: usage summed over both calls, cached tokens counted");

    $r = $t->turn($sid, 'Thanks!');
    is($r->{events}[-1]{full_response}, 'You are welcome.',
       "$p: the second turn");

    my @req = $mock->requests;
    is(scalar @req, 3, "$p: three calls");
    is($req[0]{path}, $path, "$p: the provider's path");
    is($req[0]{headers}{$header}, $value, "$p: the key in $header");
    is($req[0]{headers}{'anthropic-version'}, '2023-06-01',
       "$p: anthropic-version") if $p eq 'anthropic';
    ok(!grep({ $_ ne $header && ($req[0]{headers}{$_} // '') =~ /\Q$key\E/ }
             keys %{ $req[0]{headers} })
       && $req[0]{path} !~ /\Q$key\E/, "$p: the key nowhere else");

    my @n = map { neutral($format, $_->{body}) } @req;
    like($n[0]{system}, qr/SQL/, "$p: the system prompt in its place");
    is_deeply([ sort @{ $n[0]{tools} } ],
              [qw(execute_sql_query load_csv_data)], "$p: the tools");
    is_deeply($n[0]{messages}, [ { role => 'user', text => 'How many cities?',
                                   images => [ 'image/png',
                                               'application/pdf' ] } ],
              "$p: the question with its image and its PDF");
    $seen{$p} = $n[2]{messages};

    my $m = $n[2]{messages};
    is(scalar @$m, 6, "$p: the whole conversation in the third call");
    is_deeply($m->[1]{calls}, [ [ 'load_csv_data', {} ],
                                [ 'execute_sql_query', { query => $query } ] ],
              "$p: the tool calls, arguments as objects");
    is_deeply([ map { $_->{name} } @$m[2, 3] ],
              [qw(load_csv_data execute_sql_query)],
              "$p: each result paired with its call");
    is_deeply($m->[3]{content}{rows}, [ [3] ], "$p: a result as sent");
    is_deeply($m->[5], { role => 'user', text => 'Thanks!', images => [] },
              "$p: the new question last");

    if ($format eq 'openai') {
        my $b = $req[0]{body};
        like($b->{messages}[1]{content}[1]{image_url}{url},
             qr{^data:image/png;base64,\Q$png\E$}, "$p: the image as a data URL");
        is_deeply($b->{messages}[1]{content}[2],
                  { type => 'file', file => { filename => 'document.pdf',
                    file_data => "data:application/pdf;base64,$pdf" } },
                  "$p: the PDF as a file part");
        is_deeply([ @{ $req[2]{body}{messages} }[0 .. 4] ],
                  $req[1]{body}{messages},
                  "$p: the prefix unchanged from call to call (cacheable)");
    }

    if ($format eq 'anthropic') {
        my $b = $req[2]{body};
        is($b->{max_tokens}, 4096, "$p: max_tokens");
        is($b->{messages}[0]{content}[0]{source}{data}, $png,
           "$p: the image as a base64 source");
        is_deeply($b->{messages}[0]{content}[1],
                  { type => 'document', source => { type => 'base64',
                    media_type => 'application/pdf', data => $pdf } },
                  "$p: the PDF as a document block");
        my $marks = () = encode_json($b) =~ /"cache_control"/g;
        is($marks, 4, "$p: four cache breakpoints");
        ok($b->{system}[-1]{cache_control} && $b->{tools}[-1]{cache_control},
           "$p: on the tools and the system prompt");
        is_deeply([ map { $_->{role} } @{ $b->{messages} } ],
                  [qw(user assistant user assistant user)],
                  "$p: roles alternate, results and question in one message");
        ok($b->{messages}[3]{content}[-1]{cache_control},
           "$p: on the history before this turn");
        ok($b->{messages}[4]{content}[-1]{cache_control},
           "$p: on the end of the request");
    }

    if ($format eq 'gemini') {
        my $b = $req[0]{body};
        is($b->{contents}[0]{parts}[1]{inlineData}{data}, $png,
           "$p: the image as inlineData");
        is_deeply($b->{contents}[0]{parts}[2]{inlineData},
                  { mimeType => 'application/pdf', data => $pdf },
                  "$p: the PDF as inlineData too");
        is_deeply([ map { $_->{role} } @{ $req[2]{body}{contents} } ],
                  [qw(user model user model user)], "$p: user and model");
    }

    $r = $t->http('GET', "/api/sessions/$sid/messages?include_images=1");
    is_deeply($r->{json}{messages}[0]{metadata}{images},
              [ { mime_type => 'image/png', data => $png },
                { mime_type => 'application/pdf', data => $pdf } ],
              "$p: the image and the PDF kept with the message");
    $r = $t->http('GET', "/api/sessions/$sid/messages");
    is_deeply($r->{json}{messages}[0]{metadata}{images},
              [ { mime_type => 'image/png', size => int(length($png) * 3 / 4) },
                { mime_type => 'application/pdf',
                  size => int(length($pdf) * 3 / 4) } ],
              "$p: without include_images, its type and size only");
    $r = $t->http('GET', "/api/sessions/$sid");
    is_deeply($r->{json}{usage}, { prompt_tokens => 310,
                                   completion_tokens => 16,
                                   cached_tokens => 220 },
              "$p: the session's running totals");

    $t->stop;
    unlike($t->slurp('error.log'), qr/\Q$key\E/, "$p: no key in the log");
    $t->check_log;
}

is_deeply($seen{$_}, $seen{openai}, "$_ was sent what openai was")
    for qw(azure anthropic gemini);

# one conversation, three providers: Anthropic calls a tool, Gemini calls
# one (it gives no ids), OpenAI answers from all of it

my $t = AgentTest->new;
my %mock;
my %script = (
    anthropic => sub { $_[1] == 1
        ? { tools => [ [ 'toolu_01', 'execute_sql_query', $qjson ] ] }
        : { text => 'Three.' } },
    gemini => sub { $_[1] == 1
        ? { tools => [ [ '', 'execute_sql_query', $qjson ] ] }
        : { text => 'Still three.' } },
    openai => sub { { text => 'Three, twice.' } },
);
for my $f (qw(anthropic gemini openai)) {
    $mock{$f} = MockLLM->new(dir => $t->dir, name => $f, format => $f,
                             script => $script{$f});
}
my $models = join "\n",
    'agent_model claude provider=anthropic url=http://127.0.0.1:'
        . $mock{anthropic}->port . ';',
    'agent_model gem provider=gemini url=http://127.0.0.1:'
        . $mock{gemini}->port . ' model=g-1 alias=fast;',
    'agent_model oai provider=openai url=http://127.0.0.1:'
        . $mock{openai}->port . '/v1/chat/completions;';
my $conf = $t->conf;
$conf =~ s/agent_model mock [^;]*;/$models/;
$t->run($conf);

my $sid = $t->session;
$t->http('POST', "/api/sessions/$sid/resources?name=cities.csv", $csv,
         'Content-Type' => 'text/csv');

my $r = $t->turn($sid, 'How many?');
is($r->{events}[-1]{full_response}, 'Three.', 'switch: turn 1 on anthropic');

$r = $t->http('POST', "/api/chat/$sid/model", { name => 'fast' });
is($r->{json}{model}, 'gem', 'switch: to gemini by its alias');
$r = $t->turn($sid, 'Again?');
is($r->{events}[-1]{full_response}, 'Still three.', 'switch: turn 2 on gemini');

$r = $t->turn($sid, { message => 'Sure?', model => 'oai' });
is($r->{events}[-1]{full_response}, 'Three, twice.',
   'switch: turn 3 on openai, named by the message');

my @g = $mock{gemini}->requests;
my $gn = neutral('gemini', $g[0]{body});
is_deeply([ map { $_->{role} } @{ $gn->{messages} } ],
          [qw(user assistant tool assistant user)],
          'gemini was given what anthropic answered');
is($gn->{messages}[2]{name}, 'execute_sql_query',
   'a result named after its tool for gemini');
is_deeply($gn->{messages}[1]{calls}, [ [ 'execute_sql_query',
                                         { query => $query } ] ],
          'the call as a functionCall');

my ($o) = $mock{openai}->requests;
my @calls = map { @{ $_->{tool_calls} // [] } } @{ $o->{body}{messages} };
my @ids = map { $_->{id} } @calls;
is(scalar @ids, 2, 'openai sees both tool calls');
is($ids[0], 'toolu_01', "anthropic's id kept");
like($ids[1], qr/^call_\w+$/, 'an id made for the call gemini made');
isnt($ids[0], $ids[1], 'ids unique');
is_deeply([ map { $_->{tool_call_id} } grep { $_->{role} eq 'tool' }
            @{ $o->{body}{messages} } ], \@ids, 'each result paired');
is(scalar(() = $mock{anthropic}->requests), 2, 'anthropic called twice');

$t->stop;
$t->check_log;

# the last round a turn may make: the tools still declared (Anthropic
# refuses tool blocks in a request without them), but not to be called

for my $f (qw(anthropic gemini)) {
    my $t = AgentTest->new;
    my $off = $f eq 'anthropic' ? sub { $_[0]{tool_choice} }
                                : sub { $_[0]{toolConfig} };
    my $mock = MockLLM->new(dir => $t->dir, name => $f, format => $f,
        script => sub { $off->($_[0]) ? { text => 'Done.' }
                        : { tools => [ [ "toolu_$_[1]", 'execute_sql_query',
                                         $qjson ] ] } });
    my $conf = $t->conf(location => 'agent_max_tool_rounds 2;');
    $conf =~ s{agent_model mock [^;]*;}{"agent_model m provider=$f "
        . 'url=http://127.0.0.1:' . $mock->port . ';'}e;
    $t->run($conf);

    my $sid = $t->session;
    $t->http('POST', "/api/sessions/$sid/resources?name=cities.csv", $csv,
             'Content-Type' => 'text/csv');
    my $r = $t->turn($sid, 'Loop?');
    is($r->{events}[-1]{full_response}, 'Done.', "$f: the last round answers");

    my @req = $mock->requests;
    is(scalar @req, 2, "$f: two calls, the cap");
    ok(!$off->($req[0]{body}), "$f: the first may call tools");
    ok($req[1]{body}{tools}, "$f: the last still declares them");
    is_deeply($off->($req[1]{body}),
              $f eq 'anthropic' ? { type => 'none' }
                                : { functionCallingConfig
                                        => { mode => 'NONE' } },
              "$f: ... and may not call them");

    $t->stop;
    $t->check_log;
}

done_testing;
