#!/usr/bin/perl
# Every route of every protocol walked with hostile input (issue 48, item
# 4).  The routes are read from the C sources at run time: the LangGraph
# API's table (lg_router.c), our sessions and chat API's actions
# (chat_module.c), the JSON-RPC methods of the MCP server and of A2A, the
# agent card, A2A's HTTP+JSON routes (a2a_rest.c), Open Responses' paths
# and AG-UI's graphs; a route added
# there is walked without a change here, and the test checks that it
# sent each of them at least one request.  Each route and method gets a
# body of about 12 MB (every key a route may store over 1 MiB), values
# nested 10000 deep, limit=1000000 with a huge offset, ids of 10 KB and
# values of the wrong types; then documents grown by merges (5 PATCHes
# of 1 MB) and lists over 10 MB of items.  Each answer is a 4xx, or a
# 2xx of at most ANSWER_MAX bytes, never a 5xx but 501 or 503, and
# comes (no time-out); after the walk each worker's RSS is under
# RSS_MAX and the log has no [alert].

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time);

use constant {
    ANSWER_MAX   => 8 * 1024 * 1024 + 1024 * 1024,  # 8 MB budget + slack
    DOCUMENT_MAX => 1024 * 1024 + 64 * 1024,        # agent_max_document_size
    RSS_MAX      => 256 * 1024,                     # kB, VmRSS of a worker
    BIG          => 1100 * 1024,                    # a value past 1 MiB
    GROW         => 1000 * 1000,                    # a value under 1 MiB
    DEEP         => 10000,
    LONG_ID      => 10 * 1024,
    TIMEOUT      => 30,                             # s: no answer, a fault
};

$SIG{PIPE} = 'IGNORE';

my $root = "$FindBin::Bin/..";

# the route tables, from the sources

sub source {
    my ($file) = @_;
    open my $fh, '<', "$root/$file" or die "$file: $!";
    local $/;
    return <$fh>;
}

# a function's body: its name at the start of a line, up to the "}" there
sub function {
    my ($file, $name) = @_;
    my ($f) = source($file) =~ /^\Q$name\E\(.*?^\{\n(.*?)^\}/ms
        or die "no $name in $file";
    return $f;
}

sub methods {
    my ($flags) = @_;
    my %seen;
    return grep { !$seen{$_}++ }
           $flags =~ /NGX_HTTP_(GET|POST|PUT|PATCH|DELETE)\b/g;
}

my (%routes, @walk);

# agent_langgraph_api: ngx_http_agent_lg_paths[]
{
    my ($table) = source('src/proto/lg/ngx_http_agent_lg_router.c')
        =~ /ngx_http_agent_lg_paths\[\]\s*=\s*\{(.*?)\{\s*NULL/s
        or die 'no ngx_http_agent_lg_paths';
    while ($table
           =~ /\{\s*"([^"]*)",\s*([A-Z_|\s]+?),\s*NGX_HTTP_AGENT_LG_\w+\s*\}/g)
    {
        my ($path, $flags) = ($1, $2);
        for my $m (methods($flags)) {
            push @{ $routes{lg_paths} }, "$m $path";
            push @walk, { table => 'lg_paths', key => "$m $path",
                          proto => 'lg', method => $m, path => $path };
        }
    }
}

# agent_sessions and agent_chat: the actions of their module's route
{
    my $f = function('src/proto/chat/ngx_http_agent_chat_module.c',
                     'ngx_http_agent_chat_module_route');
    my ($body) = $f =~ /#define ngx_http_agent_is.*?\n\n(.*)#undef/s
        or die 'no ngx_http_agent_is in ngx_http_agent_chat_module_route';
    my $start = index($body, 'ngx_http_agent_sessions_proto) {');
    die 'no sessions block' if $start < 0;
    my ($depth, $end) = (0, $start);
    for my $i ($start .. length($body) - 1) {
        my $c = substr $body, $i, 1;
        $depth++ if $c eq '{';
        if ($c eq '}' && --$depth == 0) { $end = $i; last }
    }
    my @is = $body =~ /ngx_http_agent_is\("([^"]+)"\)/g;
    my ($last, @seen) = (0);
    while ($body =~ /allowed = ([^;]+);/g) {
        my ($flags, $at) = ($1, $-[0]);
        my $cond = substr $body, $last, $at - $last;
        $last = $+[0];
        my $loc = $at < $end ? 'sessions' : 'chat';
        my $path = $cond =~ /ngx_http_agent_is\("([^"]+)"\)/ ? "{id}/$1"
                 : $cond =~ /"(_\w+)"/ ? $1
                 : $cond =~ /ctx->id\.len == 0/ ? ''
                 : $cond =~ /action\.len == 0/ ? '{id}'
                 : "?unread: $cond";
        push @seen, $1 if $path =~ m{^\{id\}/(.+)};
        for my $m (methods($flags)) {
            push @{ $routes{agent_route} }, "$m $loc/$path";
            push @walk, { table => 'agent_route', key => "$m $loc/$path",
                          proto => $loc, method => $m, path => $path };
        }
    }
    is_deeply([ sort @seen ], [ sort @is ],
              'every ngx_http_agent_is() of ngx_http_agent_chat_module_route '
              . 'is a route the test read');
}

# agent_mcp_server: its JSON-RPC methods, its HTTP methods, and an answer
# of the client's (to an elicitation)
{
    my %m;
    for my $file (glob "$root/src/proto/mcp/*.c") {
        $file =~ s{^\Q$root\E/}{};
        $m{$_} = 1 for source($file)
            =~ /ngx_http_agent_method_is\("([^"]+)"\)/g;
    }
    my $route = function('src/proto/mcp/ngx_http_agent_mcpserver.c',
                         'ngx_http_agent_mcpserver_route');
    my ($allowed) = $route =~ /reply_not_allowed\(r,\s*([^)]+)\)/;
    for my $rpc (sort keys %m) {
        push @{ $routes{mcp_methods} }, $rpc;
        push @walk, { table => 'mcp_methods', key => $rpc, proto => 'mcp',
                      method => 'POST', rpc => $rpc };
    }
    for my $m (methods($allowed)) {
        next if $m eq 'POST';
        push @{ $routes{mcp_methods} }, $m;
        push @walk, { table => 'mcp_methods', key => $m, proto => 'mcp',
                      method => $m };
    }
    push @walk, { table => 'extra', key => 'mcp answer', proto => 'mcp',
                  method => 'POST', rpc => '(answer)' };
}

# agent_a2a: its JSON-RPC methods (1.0 and 0.3) and the agent card
{
    my %m;
    for my $file (glob "$root/src/proto/a2a/*.c") {
        $file =~ s{^\Q$root\E/}{};
        $m{$_} = 1 for source($file)
            =~ /ngx_http_agent_method_is\("([^"]+)"\)/g;
    }
    for my $rpc (sort keys %m) {
        push @{ $routes{a2a_methods} }, $rpc;
        push @walk, { table => 'a2a_methods', key => $rpc, proto => 'a2a',
                      method => 'POST', rpc => $rpc };
    }
    my ($card) = source('src/proto/a2a/ngx_http_agent_a2a.c')
        =~ /#define NGX_HTTP_AGENT_A2A_CARD\s+"([^"]+)"/ or die 'no card';
    push @{ $routes{a2a_methods} }, "GET $card";
    push @walk, { table => 'a2a_methods', key => "GET $card", proto => 'a2a',
                  method => 'GET', path => $card };
}

# agent_a2a's HTTP+JSON binding: the paths its match function compares,
# in a list here that must hold every one of them and each method
{
    my @list = ([ POST => 'message:send' ], [ POST => 'message:stream' ],
                [ GET => 'tasks' ], [ GET => 'extendedAgentCard' ],
                [ GET => 'tasks/{id}' ], [ POST => 'tasks/{id}:cancel' ],
                [ POST => 'tasks/{id}:subscribe' ],
                [ GET => 'tasks/{id}/pushNotificationConfigs' ],
                [ POST => 'tasks/{id}/pushNotificationConfigs' ],
                [ GET => 'tasks/{id}/pushNotificationConfigs/c1' ],
                [ DELETE => 'tasks/{id}/pushNotificationConfigs/c1' ]);
    my $f = function('src/proto/a2a/ngx_http_agent_a2a_rest.c',
                     'ngx_http_agent_a2a_rest_match');
    my @lit = $f =~ /"([a-z:\/][A-Za-z:\/]*)"/g;
    my @missed = grep { my $l = $_; !grep { index($_->[1], $l) >= 0 } @list }
                 @lit;
    my %have = map { $_->[0] => 1 } @list;
    push @missed, grep { !$have{$_} } methods($f);
    ok(@lit && !@missed, 'the list of A2A\'s HTTP+JSON routes holds every '
       . 'path and method of its match function') or diag("@missed");
    for (@list) {
        push @{ $routes{a2a_rest} }, "$_->[0] $_->[1]";
        push @walk, { table => 'a2a_rest', key => "$_->[0] $_->[1]",
                      proto => 'a2a_rest', method => $_->[0],
                      path => $_->[1] };
    }
}

# agent_responses: the paths its route function compares, in a list here
# that must hold every one of them
{
    my @list = ([ POST => 'responses' ], [ GET => 'responses/{id}' ],
                [ DELETE => 'responses/{id}' ],
                [ POST => 'responses/{id}/cancel' ],
                [ GET => 'responses/{id}/input_items' ]);
    my $f = function('src/proto/responses/ngx_http_agent_responses.c',
                     'ngx_http_agent_responses_route');
    my @lit = $f =~ /ngx_strncmp\([^"]*"([^"]+)"/g;
    my @missed = grep { my $l = $_; !grep { index($_->[1], $l) >= 0 } @list }
                 @lit;
    my %have = map { $_->[0] => 1 } @list;
    push @missed, grep { !$have{$_} } methods($f);
    ok(@lit && !@missed, 'the list of Open Responses\' routes holds every '
       . 'path and method of its route function') or diag("@missed");
    for (@list) {
        push @{ $routes{responses_route} }, "$_->[0] $_->[1]";
        push @walk, { table => 'responses_route', key => "$_->[0] $_->[1]",
                      proto => 'responses', method => $_->[0],
                      path => $_->[1] };
    }
}

# agent_agui: POST {location} and {location}{graph} of each it allows
my @agui_graphs = qw(notes approval);
{
    my $f = function('src/proto/agui/ngx_http_agent_agui.c',
                     'ngx_http_agent_agui_route');
    for my $m (methods($f)) {
        for my $g ('', @agui_graphs) {
            push @{ $routes{agui_route} }, "$m $g";
            push @walk, { table => 'agui_route', key => "$m $g",
                          proto => 'agui', method => $m, path => $g };
        }
    }
}

ok(@{ $routes{$_} // [] }, "routes read from $_")
    for qw(lg_paths agent_route mcp_methods a2a_methods a2a_rest
           responses_route agui_route);

# nginx with every location

my $t = AgentTest->new;
$t->mock(sub { return { text => 'walked' } });

my $conf = $t->conf(http => <<'HTTP');
client_max_body_size 64m;
large_client_header_buffers 4 64k;
agent_graph chat {
    channel notes merge;
    channel topic value;
    node model llm;
    edge START model;
    edge model END;
}
agent_graph notes {
    channel notes merge;
    channel topic value;
    node say template "text=about {{topic}}";
    edge START say;
    edge say END;
}
agent_graph approval {
    channel plan value 'default="Go?"';
    channel answer value;
    node ask interrupt value=plan resume=answer;
    node done template "text=you said {{answer}}";
    edge START ask;
    edge ask done;
    edge done END;
}
agent_use_graph chat;
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
            agent_owner \$http_x_user; agent_assistants notes approval; }
        location = /mcp { agent_mcp_server; agent_owner \$http_x_user;
            agent_assistants notes approval; }
        location /a2a/ { agent_a2a; agent_owner \$http_x_user;
            agent_webhooks http://127.0.0.1:1/push/; }
        location /v1/ { agent_responses; agent_owner \$http_x_user;
            agent_assistants notes approval; }
        location /agui/ { agent_agui; agent_owner \$http_x_user;
            agent_assistants @agui_graphs; }
        $1};
$t->run($conf);

# a request on a socket of its own: its status, the size of its answer
# (read up to ANSWER_MAX and a bit, no more), and whether it came
sub request {
    my ($method, $path, $body, %h) = @_;
    my $res = { status => 0, size => 0, since => time };
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port)
        or return { %$res, error => "connect: $!" };
    my $out = "$method $path HTTP/1.1\r\nHost: localhost\r\n"
              . "Connection: close\r\nX-User: walker\r\n"
              . join('', map { "$_: $h{$_}\r\n" } sort keys %h);
    $out .= "Content-Type: application/json\r\nContent-Length: "
            . length($body) . "\r\n" if defined $body;
    $out .= "\r\n" . ($body // '');

    $s->blocking(0);
    my $sel = IO::Select->new($s);
    my ($off, $in, $done) = (0, '', 0);
    my $deadline = time + TIMEOUT;

    while (!$done && time < $deadline) {
        my ($r, $w) = IO::Select->select($sel,
                                         $off < length $out ? $sel : undef,
                                         undef, $deadline - time);
        if ($w && @$w) {
            my $n = syswrite($s, $out, 1 << 20, $off);
            # refused before it was all sent: the answer tells
            $off = defined $n ? $off + $n
                 : $!{EAGAIN} ? $off : length $out;
        }
        next unless $r && @$r;
        my $n = sysread($s, $in, 1 << 20, length $in);
        $done = 1 if defined $n && $n == 0;
        $done = 1 if !defined $n && !$!{EAGAIN};
        if (length($in) > ANSWER_MAX + 65536) {
            $res->{over} = 1;
            $done = 1;
        }
    }
    close $s;

    $res->{secs} = time - $res->{since};
    $res->{timeout} = 1 unless $done;
    ($res->{status}) = $in =~ m{^HTTP/1\.\d (\d+)};
    $res->{status} //= 0;
    my $head = index($in, "\r\n\r\n");
    $res->{size} = $head < 0 ? 0 : length($in) - $head - 4;
    $res->{body} = substr $in, $head + 4, 300 if $head >= 0;
    $res->{json} = eval { decode_json(substr $in, $head + 4) }
        if $head >= 0 && !$res->{over} && $res->{size} < 1 << 20;
    return $res;
}

my @took;

sub answer_ok {
    my ($res, $name) = @_;
    push @took, [ $res->{secs}, $name ];
    my $st = $res->{status};
    my $fine = !$res->{timeout} && !$res->{over} && $st
               && (($st >= 400 && $st < 500) || $st == 501 || $st == 503
                   || ($st >= 200 && $st < 300
                       && $res->{size} <= ANSWER_MAX));
    my $how = $res->{timeout} ? "no answer in " . TIMEOUT . " s"
            : $res->{over} ? "over " . ANSWER_MAX . " bytes"
            : "$st, $res->{size} bytes";
    # what a refusal said, for prove -v
    note(substr($res->{body} // '', 0, 160)) if $fine && $st >= 300;
    ok($fine, "$name: $how")
        or diag(substr($res->{body} // $res->{error} // '', 0, 200));
    return $res;
}

# fixtures: the ids the routes name

my $big = 'b' x BIG;
my $long = 'a' x LONG_ID;
my $deep = ('[' x DEEP) . (']' x DEEP);
my %fx;

sub post {
    my ($path, $body) = @_;
    my $r = request('POST', $path, encode_json($body));
    return $r->{json} // {};
}

$fx{session} = post('/api/sessions/', {})->{id};
post("/api/chat/$fx{session}/message", { message => 'hi' });

sub lg_assistant { post('/lg/assistants', { graph_id => 'chat' })
                       ->{assistant_id} }
sub lg_thread { post('/lg/threads', {})->{thread_id} }
sub lg_cron { post('/lg/runs/crons', { assistant_id => 'chat',
                                       schedule => '0 0 1 1 *' })->{cron_id} }

$fx{assistant} = lg_assistant();
$fx{thread} = lg_thread();
post("/lg/threads/$fx{thread}/runs/wait",
     { assistant_id => 'chat',
       input => { messages => [ { role => 'user', content => 'hi' } ] } });
my $runs = request('GET', "/lg/threads/$fx{thread}/runs")->{json};
$fx{run} = ref $runs eq 'ARRAY' && @$runs ? $runs->[0]{run_id} : 'x';
my $state = request('GET', "/lg/threads/$fx{thread}/state")->{json} // {};
$fx{checkpoint} = $state->{checkpoint}{checkpoint_id} // 'x';
$fx{cron} = lg_cron();

my $task = post('/a2a/', { jsonrpc => '2.0', id => 1,
                           method => 'SendMessage',
                           params => { message => {
                               role => 'ROLE_USER', messageId => 'm1',
                               parts => [ { text => 'hi' } ] } } });
$task = $task->{result}{task} // $task->{result} // {};
$fx{task} = $task->{id} // 'x';
$fx{context} = $task->{contextId} // 'x';

sub response_id { post('/v1/responses', { model => 'chat', input => 'hi' })
                      ->{id} // 'x' }
$fx{response} = response_id();

ok($fx{$_} && $fx{$_} ne 'x', "fixture: a $_ to walk with")
    for qw(session assistant thread run checkpoint cron task response);

# the probes: each a request of a route, by protocol

my @keys = qw(metadata config context values value input kwargs params);

sub fill {
    my ($path, $id, $fresh) = @_;
    my @seg = split m{/}, $path, -1;
    my %kind = (assistants => 'assistant', threads => 'thread',
                runs => 'run', state => 'checkpoint', crons => 'cron');
    for my $i (0 .. $#seg) {
        next unless $seg[$i] eq '*';
        my $k = $kind{ $i ? $seg[$i - 1] : '' } // 'other';
        # a DELETE takes what it names away: a new one for it
        if ($fresh && $i == $#seg) {
            $seg[$i] = $id // ($k eq 'assistant' ? lg_assistant()
                             : $k eq 'thread' ? lg_thread()
                             : $k eq 'cron' ? lg_cron() : undef) // 'x';
            next;
        }
        $seg[$i] = $id // $fx{$k} // 'x';
    }
    return join '/', @seg;
}

# the body of a route of ours (LangGraph, sessions, chat) for a probe
sub plain_body {
    my ($probe, $path) = @_;
    # a new assistant is none of the graphs' own
    my $ids = { graph_id => 'chat', namespace => [ 'walk' ], key => 'k',
                name => 'walk', schedule => '0 0 1 1 *',
                $path =~ /^assistants/ ? () : (assistant_id => 'chat') };
    return encode_json({ %$ids,
        (map { $_ => { notes => { x => $big } } } @keys),
        input => { messages => [ { role => 'user', content => $big } ] },
        values => { notes => { x => $big }, topic => $big },
        message => $big, resume => $big }) if $probe eq 'big';
    return '{' . join(',', map { "\"$_\":$deep" }
                           @keys, qw(message command namespace)) . '}'
        if $probe eq 'deep';
    return encode_json({ %$ids, limit => 1000000, offset => 999999999999,
                         max_depth => 1000000, history_length => 1000000,
                         namespace_prefix => [ 'walk' ] })
        if $probe eq 'limit';
    return encode_json({ (map { $_ => $long } qw(graph_id assistant_id
                         thread_id checkpoint_id run_id key before
                         name message)),
                         namespace => [ $long ],
                         config => { configurable => {
                             thread_id => $long, checkpoint_id => $long } } })
        if $probe eq 'long';
    return encode_json({ metadata => 's', config => [ 1 ], context => 5,
                         values => 'v', value => 7, input => 'i',
                         kwargs => [], params => 'p', limit => 'ten',
                         offset => [], graph_id => 5, assistant_id => {},
                         namespace => 'n', key => [], message => {},
                         command => 'c', stream_mode => 5, if_exists => 3,
                         thread_id => 9, title => [], resume => undef,
                         name => 7 })
        if $probe eq 'types';
    return '[1,"a",{}]';
}

# JSON-RPC's params for a probe (MCP and A2A)
sub rpc_params {
    my ($probe, $proto) = @_;
    my $msg = { role => 'ROLE_USER', messageId => 'm2',
                parts => [ { text => $big } ],
                metadata => { x => $big } };
    return { name => 'chat', id => $fx{task},
             arguments => { message => $big, notes => { x => $big },
                            topic => $big },
             message => $msg, _meta => { x => $big },
             (map { $_ => { x => $big } } @keys),
             action => 'accept', content => { answer => $big } }
        if $probe eq 'big';
    return { name => 'chat', id => $fx{task}, contextId => $fx{context},
             limit => 1000000, pageSize => 1000000, offset => 999999999999,
             historyLength => 1000000, cursor => '999999999999' }
        if $probe eq 'limit';
    return { name => $long, id => $long, contextId => $long,
             taskId => $long, requestId => $long,
             arguments => { thread_id => $long, message => 'x' },
             message => { role => 'ROLE_USER', messageId => $long,
                          contextId => $long, taskId => $long,
                          parts => [ { text => 'x' } ] } }
        if $probe eq 'long';
    return { name => [], id => 5, arguments => 'a', message => 's',
             contextId => {}, pageSize => 'ten', historyLength => [],
             metadata => 'm', configuration => 5 }
        if $probe eq 'types';
    return 'params';
}

sub rpc_body {
    my ($w, $probe) = @_;
    my $notification = ($w->{rpc} // '') =~ /^notifications\//;
    my %rpc = (jsonrpc => '2.0', $notification ? () : (id => 1));
    if ($w->{rpc} eq '(answer)') {
        # an answer to an elicitation of ours that never was
        $rpc{id} = $probe eq 'long' ? $long : 'e1';
        $rpc{result} = rpc_params($probe);
    } else {
        $rpc{method} = $w->{rpc};
        $rpc{id} = $long if $probe eq 'long' && !$notification;
        $rpc{params} = rpc_params($probe);
    }
    return '[1,"a",{}]' if $probe eq 'array';
    my $b = encode_json(\%rpc);
    $b =~ s/"params":"params"/"params":$deep/ if $probe eq 'deep';
    $b =~ s/"result":"params"/"result":$deep/ if $probe eq 'deep';
    return $b;
}

sub responses_body {
    my ($probe) = @_;
    return encode_json({ (map { $_ => { x => $big } } @keys),
                         model => 'chat', input => $big,
                         instructions => $big, metadata => { x => $big } })
        if $probe eq 'big';
    return '{"model":"chat","input":' . $deep . ',"metadata":' . $deep . '}'
        if $probe eq 'deep';
    return encode_json({ model => 'chat', input => 'x', limit => 1000000,
                         max_output_tokens => 1000000,
                         offset => 999999999999 })
        if $probe eq 'limit';
    return encode_json({ model => $long, input => 'x',
                         previous_response_id => $long,
                         conversation => $long })
        if $probe eq 'long';
    return encode_json({ model => 5, input => {}, metadata => 's',
                         conversation => [], background => 'yes',
                         stream => 'no', store => 7 })
        if $probe eq 'types';
    return '[1,"a",{}]';
}

sub agui_body {
    my ($probe) = @_;
    return encode_json({ (map { $_ => { x => $big } } @keys),
                         threadId => "walk$probe", runId => 'r1',
                         messages => [ { id => 'm1', role => 'user',
                                         content => $big } ],
                         state => { notes => { x => $big }, topic => $big },
                         tools => [], context => [ { description => 'd',
                                                     value => $big } ],
                         forwardedProps => { x => $big } })
        if $probe eq 'big';
    return '{"threadId":"walkdeep","runId":"r","messages":' . $deep
           . ',"state":' . $deep . ',"forwardedProps":' . $deep . '}'
        if $probe eq 'deep';
    return encode_json({ threadId => 'walklimit', runId => 'r',
                         messages => [], limit => 1000000,
                         offset => 999999999999 })
        if $probe eq 'limit';
    return encode_json({ threadId => $long, runId => $long,
                         messages => [ { id => $long, role => 'user',
                                         content => 'x' } ] })
        if $probe eq 'long';
    return encode_json({ threadId => 5, runId => [], messages => {},
                         state => 's', tools => 'x', context => 7,
                         forwardedProps => [] })
        if $probe eq 'types';
    return '[1,"a",{}]';
}

my @probes = qw(big deep limit long types array);
my %walked;
my $query = '?limit=1000000&offset=999999999999&namespace=walk&key=k'
            . '&before=999999999999';

for my $w (@walk) {
    for my $probe (@probes) {
        my $m = $w->{method};

        # a GET reads no body: its query's limit and its path's ids
        next if $m eq 'GET' && $probe ne 'limit' && $probe ne 'long';

        my $fresh = $m eq 'DELETE';
        my $id = $probe eq 'long' ? $long : undef;
        my ($path, $body, %h);

        if ($w->{proto} eq 'lg') {
            $path = '/lg/' . fill($w->{path}, $id, $fresh);
            $body = plain_body($probe, $w->{path});

        } elsif ($w->{proto} eq 'sessions' || $w->{proto} eq 'chat') {
            my $sid = $id // ($fresh ? post('/api/sessions/', {})->{id}
                                     : $fx{session}) // 'x';
            (my $p = $w->{path}) =~ s/\{id\}/$sid/;
            $path = "/api/$w->{proto}/$p";
            $body = plain_body($probe, $p);

        } elsif ($w->{proto} eq 'mcp') {
            $path = '/mcp';
            $h{'Mcp-Session-Id'} = $long if $probe eq 'long';
            $body = $w->{rpc} ? rpc_body($w, $probe) : undef;

        } elsif ($w->{proto} eq 'a2a') {
            $path = '/a2a/' . ($w->{path} // '');
            $body = $w->{rpc} ? rpc_body($w, $probe) : undef;

        } elsif ($w->{proto} eq 'a2a_rest') {
            # the body is a JSON-RPC request's params
            (my $p = $w->{path}) =~ s/\{id\}/$id \/\/ $fx{task}/e;
            $path = "/a2a/$p";
            $body = $probe eq 'array' ? '[1,"a",{}]'
                  : $probe eq 'deep' ? "{\"message\":$deep}"
                  : encode_json(rpc_params($probe));

        } elsif ($w->{proto} eq 'responses') {
            my $rid = $id // ($fresh ? response_id() : $fx{response});
            (my $p = $w->{path}) =~ s/\{id\}/$rid/;
            $path = "/v1/$p";
            $body = responses_body($probe);

        } else {
            $path = '/agui/' . ($probe eq 'long' && $w->{path} ? $long
                                                              : $w->{path});
            $body = agui_body($probe);
        }

        if ($m eq 'GET') {
            $path .= $query if $probe eq 'limit';
            undef $body;
        }

        $walked{ $w->{table} }{ $w->{key} }++;
        answer_ok(request($m, $path, $body, %h),
                  "$w->{table} $w->{key} $probe");
    }
}

for my $table (sort keys %routes) {
    my @not = grep { !$walked{$table}{$_} } @{ $routes{$table} };
    ok(!@not, "walked every route of $table ("
       . scalar(@{ $routes{$table} }) . ')') or diag("not walked: @not");
}

# documents grown by merges, lists of large items

sub grow {
    my ($what, $path, $get) = @_;
    for my $i (1 .. 5) {
        answer_ok(request('PATCH', $path, encode_json(
            { metadata => { "k$i" => 'g' x GROW } })),
            "$what: PATCH $i of 1 MB metadata");
    }
    return unless $get;
    my $r = answer_ok(request('GET', $get), "$what: GET");
    ok($r->{size} <= DOCUMENT_MAX,
       "$what: the merged document within agent_max_document_size "
       . "($r->{size} bytes)");
}

my $asst = lg_assistant();
grow('an assistant', "/lg/assistants/$asst", "/lg/assistants/$asst");
my $th = lg_thread();
grow('a thread', "/lg/threads/$th", "/lg/threads/$th");
my $cron = lg_cron();
grow('a cron', "/lg/runs/crons/$cron");

for my $i (1 .. 10) {
    answer_ok(request('PUT', '/lg/store/items', encode_json(
        { namespace => [ 'grow' ], key => "k$i",
          value => { x => 'g' x GROW } })), "store: PUT $i of 1 MB");
}

my $list = encode_json({ limit => 1000, offset => 0 });
answer_ok(request('POST', '/lg/assistants/search', $list),
          'grown: assistants/search limit=1000');
answer_ok(request('POST', "/lg/assistants/$asst/versions", $list),
          'grown: assistants/{id}/versions limit=1000');
answer_ok(request('POST', '/lg/threads/search', $list),
          'grown: threads/search limit=1000');
answer_ok(request('POST', '/lg/runs/crons/search', $list),
          'grown: runs/crons/search limit=1000');
answer_ok(request('POST', '/lg/store/items/search', encode_json(
    { namespace_prefix => [ 'grow' ], limit => 1000 })),
    'grown: store/items/search limit=1000 over 10 MB of items');
answer_ok(request('GET', '/api/sessions/?limit=1000'),
          'grown: sessions limit=1000');
answer_ok(request('GET', "/lg/threads/$th/history?limit=1000"),
          'grown: a thread\'s history limit=1000');

# each worker's memory after it all

for my $pid ($t->worker_pids) {
    my $status = AgentTest::slurp_file("/proc/$pid/status");
    my ($rss) = $status =~ /VmRSS:\s+(\d+)/;
    SKIP: {
        # make test-asan: freed memory waits in ASan's quarantine (256 MB)
        skip "the allocator is ASan's: $rss kB", 1
            if $ENV{AGENT_SANITIZER_LOGS};
        ok(defined $rss && $rss <= RSS_MAX,
           "worker $pid: VmRSS " . ($rss // '?') . ' kB within ' . RSS_MAX);
    }
}

# the slowest requests, for prove -v
note(sprintf '%.1f s %s', @$_)
    for (sort { $b->[0] <=> $a->[0] } @took)[0 .. 9];

$t->check_log;
done_testing;
