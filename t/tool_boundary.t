#!/usr/bin/perl
# A node's tools are the only tools it runs.  The model is offered some tools
# and calls others: an agent_tool location that no step offered, a tool of a
# bound MCP server that the step did not bind.  Neither runs; each is an
# error result "not a tool of this step".  Two MCP servers list a tool of the
# same name: a call goes to the server the step bound, never to the first
# declared; a step that binds both is offered the second as SERVER__TOOL,
# and that name reaches the server as its own.  A server's names that
# providers refuse, a list past max_tools= and tools no step binds never
# reach the model.  Tool names the model makes up are counted under "other"
# in the metrics.  The servers are scripted at the wire; the model is
# scripted.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use JSON::PP;

my $root = AgentTest::root();
my $t = AgentTest->new;
my $json = JSON::PP->new->canonical;

# a scripted MCP server: lists @names, answers a call with who it is
sub server {
    my ($name, @names) = @_;
    return MockLLM->new(dir => $t->dir, name => $name, script => sub {
        my ($b) = @_;
        my $m = $b->{method} // '';
        my $ok = sub { { status => 200,
                         headers => { 'Mcp-Session-Id' => "s-$name" },
                         body => $json->encode({ jsonrpc => '2.0',
                                                 id => $b->{id},
                                                 result => $_[0] }) } };
        return $ok->({ protocolVersion => '2025-06-18', capabilities => {},
                       serverInfo => { name => $name, version => '1' } })
            if $m eq 'initialize';
        return { status => 202, body => '' }
            if $m eq 'notifications/initialized';
        return $ok->({ tools => [ map { { name => $_,
                                          inputSchema => { type => 'object' } } }
                                  @names ] })
            if $m eq 'tools/list';
        return $ok->({ content => [ { type => 'text',
                       text => "$name ran " . ($b->{params}{name} // "") } ] });
    });
}

my @many = map { "t$_" } 1 .. 10;
my $one = server('one', 'read_file', 'delete_file', 'weather');
my $two = server('two', 'read_file', 'write_file');
my $odd = server('odd', 'good_name', 'bad name', 'dotted.name', 'x' x 65,
                 "new\nline", 'good_name', @many);

sub calls {
    my ($srv) = @_;
    return map { $_->{body}{params}{name} }
           grep { ($_->{body}{method} // '') eq 'tools/call' } $srv->requests;
}

# a service behind an agent_tool location: it must see only what was offered
my $svc = MockLLM->new(dir => $t->dir, name => 'svc', script => sub {
    { status => 200, body => '{"done": true}' } });

my %plan = (
    'weather only'   => [ [ 'a1', 'admin_delete', '{"all": true}' ],
                          [ 'a2', 'weather', '{"city": "Oslo"}' ] ],
    'delete it'      => [ [ 'd1', 'delete_file', '{"path": "/"}' ],
                          [ 'd2', 'read_file', '{"path": "a"}' ] ],
    'read it'        => [ [ 'r1', 'read_file', '{"path": "b"}' ] ],
    'both'           => [ [ 'b1', 'read_file', '{}' ],
                          [ 'b2', 'two__read_file', '{}' ],
                          [ 'b3', 'weather', '{}' ] ],
    'odd'            => [ [ 'o1', 'good_name', '{}' ],
                          [ 'o2', 'made_up_1', '{}' ],
                          [ 'o3', 'made_up_2', '{}' ] ],
);

my $mock = $t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    return { text => 'done' } if grep { $_->{role} eq 'tool' } @m[$u .. $#m];
    my $q = AgentTest::last_user($req);
    return { tools => $plan{$q} } if $plan{$q};
    return { text => 'no tools' };
});

my ($p1, $p2, $p3, $ps) = map { $_->port } $one, $two, $odd, $svc;

my $graph = sub {
    my ($name, $tools) = @_;
    return <<"G";
agent_graph $name {
    node agent llm prompt=react_system.md tools=$tools;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
G
};

my $conf = $t->conf(http => <<"HTTP" . join('', map { $graph->(@$_) }
agent_prompts $root/prompts;
agent_tool weather location=/internal/weather "description=The weather";
agent_tool admin_delete location=/internal/admin "description=Deletes all";
agent_mcp one url=http://127.0.0.1:$p1/mcp timeout=5s;
agent_mcp two url=http://127.0.0.1:$p2/mcp timeout=5s;
agent_mcp odd url=http://127.0.0.1:$p3/mcp timeout=5s max_tools=5;
HTTP
    [ 'weathered', 'weather' ], [ 'reader', 'one.read_file' ],
    [ 'second', 'two.read_file' ], [ 'both', 'one.*,two.read_file,weather' ],
    [ 'odd', 'odd.*' ]), location => 'agent_use_graph weathered;');
$conf =~ s{(location /api/sessions/)}{location /internal/weather { internal; proxy_pass http://127.0.0.1:$ps/weather; }
        location /internal/admin { internal; proxy_pass http://127.0.0.1:$ps/admin; }
        location /reader/ { agent_chat; agent_use_graph reader; }
        location /second/ { agent_chat; agent_use_graph second; }
        location /both/ { agent_chat; agent_use_graph both; }
        location /odd/ { agent_chat; agent_use_graph odd; }
        location = /metrics { agent_metrics; }
        $1};
$t->run($conf);

sub results {
    my ($r) = @_;
    return { map { $_->{id} => $_->{content} }
             grep { $_->{type} eq 'tool_result' } @{ $r->{events} } };
}

sub offered {
    my @reqs = $mock->requests;
    return [ sort map { $_->{function}{name} }
             @{ $reqs[-2]{body}{tools} // [] } ];
}

my $sid = $t->session;

# 1. offered weather, the model called admin_delete too
my $r = $t->turn($sid, 'weather only');
is($r->{types}[-1], 'end', 'weather only: the turn ends') or diag explain $r;
is_deeply(offered(), ['weather'], 'weather only: one tool offered');
my $res = results($r);
is_deeply($res->{a1}, { error => 'not a tool of this step' },
          'a tool that was not offered: an error result');
is_deeply($res->{a2}, { done => JSON::PP::true }, 'the offered one ran');
is_deeply([ map { $_->{path} } $svc->requests ], ['/weather'],
          'the service saw the offered call only, never /admin');

# 2. bound one.read_file, the model called delete_file of the same server
$r = $t->stream("/reader/$sid/message", encode_json({ message => 'delete it' }));
is($r->{types}[-1], 'end', 'delete it: the turn ends') or diag explain $r;
is_deeply(offered(), ['read_file'], 'reader: only the bound tool offered');
$res = results($r);
is_deeply($res->{d1}, { error => 'not a tool of this step' },
          'a tool of the bound server that was not bound: an error result');
is($res->{d2}, 'one ran read_file', 'the bound tool ran on its server');
is_deeply([ calls($one) ], ['read_file'], 'server one never saw delete_file');

# 3. bound two.read_file: the call goes to two, though one lists it first
$r = $t->stream("/second/$sid/message", encode_json({ message => 'read it' }));
is(results($r)->{r1}, 'two ran read_file', 'the call went to the bound server');
is_deeply([ calls($one) ], ['read_file'], 'server one got nothing more');
is_deeply([ calls($two) ], ['read_file'], 'server two got it');

# 4. both servers bound: the second read_file as two__read_file
$r = $t->stream("/both/$sid/message", encode_json({ message => 'both' }));
is($r->{types}[-1], 'end', 'both: the turn ends') or diag explain $r;
is_deeply(offered(), [qw(delete_file one__weather read_file two__read_file
                         weather)],
          'both: each name offered once, the second server\'s prefixed, '
          . 'the registry\'s weather before the server\'s');
$res = results($r);
is($res->{b1}, 'one ran read_file', 'read_file: the first bound server');
is($res->{b2}, 'two ran read_file',
   'two__read_file: server two, under its own name');
is_deeply($res->{b3}, { done => JSON::PP::true },
          'weather: the agent_tool, not server one\'s weather');
is_deeply([ calls($two) ], [ 'read_file', 'read_file' ],
          'server two saw its own name');

# 5. names providers refuse, duplicates, max_tools=
$r = $t->stream("/odd/$sid/message", encode_json({ message => 'odd' }));
is($r->{types}[-1], 'end', 'odd: the turn ends') or diag explain $r;
is_deeply(offered(), [qw(good_name t1 t2 t3 t4)],
          'odd: bad names dropped, the duplicate once, at most max_tools=5');
my $log = $t->slurp('error.log');
like($log, qr/MCP server "odd": a tool name that is not 1 to 64 of/,
     'a bad name is logged');
unlike($log, qr/new\nline|"bad name"/, 'and never written to the log');
like($log, qr/MCP server "odd": the tool "good_name" is listed twice/,
     'a duplicate is logged');
like($log, qr/MCP server "odd": more than 5 tools \(max_tools=\)/,
     'the cap is logged');
is(results($r)->{o1}, 'odd ran good_name', 'a good name runs');

# 6. metrics: made-up names are one "other" series
my $m = $t->http('GET', '/metrics')->{content};
unlike($m, qr/made_up/, 'no series for a name the model made up');
like($m, qr/tool="other"/, 'they count as "other"');
like($m, qr/tool="good_name"/, 'a bound tool has its own series');

$t->check_log;
done_testing;
