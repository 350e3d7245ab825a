#!/usr/bin/perl
# MCP servers as tool sources (agent_mcp): seed 001's five tools served by
# a server written with the official TypeScript SDK (t/mcp/server.mjs),
# stateful with SSE answers and stateless with JSON answers.  The model is
# offered the server's tools under their plain names with the server's
# input schemas; a call goes as tools/call and its text comes back parsed;
# isError is an error result; a session the server forgot is started again;
# a server that is down leaves its tools out and the turn answers.
# Skipped where the SDK cannot be installed from npm.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use HTTP::Tiny;

my $root = AgentTest::root();
my $t = AgentTest->new;

my $sf = $t->mcp_server('stateful')
    or plan skip_all => 'the MCP SDK could not be installed from npm';
my $sl = $t->mcp_server('stateless');
my $stateful = $sf->{port};
my $stateless = $sl->{port};
my %servers = (stateful => $sf, stateless => $sl);

sub calls { AgentTest::mcp_calls($servers{$_[0]}) }

my $mock = $t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $q = AgentTest::last_user($req);
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my @results = grep { $_->{role} eq 'tool' } @m[$u .. $#m];
    return { text => 'answered: ' . join(' | ', map { $_->{content} } @results) }
        if @results;
    return { tools => [ [ 'd1', 'search_docs', '{"query": "nginx workers"}' ],
                        [ 'p1', 'search_posts',
                          '{"query": "restart", "excludePostId": "p1"}' ] ] }
        if $q eq 'suggest';
    return { tools => [ [ 'i1', 'search_issues', '{"query": "fail"}' ] ] }
        if $q eq 'broken index';
    return { tools => [ [ 'd2', 'search_docs', '{"query": "again"}' ] ] }
        if $q eq 'again';
    return { text => 'no tools needed' };
});

# one worker: an MCP session is a worker's own, and the expiry below is
# seen only by a worker that had one (with two, the turn after it could
# land on the other worker, which starts its first session: no "expired")
my $conf = $t->conf(workers => 1, location => 'agent_use_graph seeded;',
                    http => <<"HTTP");
agent_prompts $root/prompts;
agent_mcp seed url=http://127.0.0.1:$stateful/mcp timeout=5s;
agent_mcp flat url=http://127.0.0.1:$stateless/mcp tools=search_docs;
agent_mcp down url=http://127.0.0.1:1/mcp timeout=2s;
agent_graph seeded {
    node agent llm prompt=react_system.md tools=seed.*;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
agent_graph flat {
    node agent llm prompt=react_system.md tools=flat.*,load_csv_data;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
agent_graph downed {
    node agent llm prompt=react_system.md tools=down.*,load_csv_data;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
HTTP
$conf =~ s{(location /api/sessions/)}
          {location /flat/ { agent_chat; agent_use_graph flat; }
        location /downed/ { agent_chat; agent_use_graph downed; }
        $1};
$t->run($conf);

# 1. stateful, SSE answers: the five tools offered, two called at once
my $sid = $t->session;
my $r = $t->turn($sid, 'suggest');
is($r->{types}[-1], 'end', 'stateful: the turn ends') or diag explain $r;
my @reqs = $mock->requests;
my %offered = map { $_->{function}{name} => $_->{function} }
              @{ $reqs[0]{body}{tools} // [] };
is_deeply([ sort keys %offered ],
          [qw(generate_action_hint search_docs search_issues search_m365
              search_posts)], 'stateful: the seed\'s five tools, plain names');
is_deeply($offered{search_posts}{parameters}{required}, ['query'],
          'stateful: the server\'s inputSchema as the parameters');
ok(exists $offered{search_posts}{parameters}{properties}{excludePostId},
   'stateful: with its optional excludePostId');
my %res = map { $_->{id} => $_->{content} }
          grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is($res{d1}[0]{sourceType}, 'docs', 'stateful: search_docs answered, parsed');
is_deeply([ map { $_->{id} } @{ $res{p1} } ], ['p2'],
          'stateful: excludePostId reached the server');
is_deeply([ map { $_->{tool} } calls('stateful') ], [qw(search_docs search_posts)],
          'stateful: the server saw both calls');
like($t->slurp('error.log'), qr/MCP server "seed": 5 tools, protocol 2025-11-25/,
     'stateful: the session started and listed');

# 2. isError is an error result the model sees
$r = $t->turn($sid, 'broken index');
($r) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is_deeply($r->{content}, { error => 'the index is offline' },
          'isError: an error result with the server\'s text');

# 3. the server forgets its sessions: one new session, the call goes on
is(HTTP::Tiny->new->post("http://127.0.0.1:$stateful/expire")->{status}, 200,
   'the server forgot its sessions');
$r = $t->turn($sid, 'again');
($r) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is($r->{content}[0]{title}, 'docs about again',
   'expired session: started again, the call answered');
like($t->slurp('error.log'), qr/MCP server "seed": the session expired/,
     'expired session: logged');

# 4. stateless, JSON answers, a tools= filter on the server
$r = $t->stream("/flat/$sid/message", encode_json({ message => 'again' }));
is($r->{types}[-1], 'end', 'stateless: the turn ends');
@reqs = $mock->requests;
is_deeply([ sort map { $_->{function}{name} } @{ $reqs[-2]{body}{tools} } ],
          [qw(load_csv_data search_docs)],
          'stateless: the filtered tool beside a built-in one');
($r) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is($r->{content}[0]{sourceType}, 'docs', 'stateless: answered');
like($t->slurp('error.log'), qr/MCP server "flat": 1 tools, protocol 2025-11-25, no session/,
     'stateless: no session id');

# 5. a server that is down: its tools left out, the turn answers
$r = $t->stream("/downed/$sid/message", encode_json({ message => 'hello' }));
is($r->{types}[-1], 'end', 'down: the turn still answers');
@reqs = $mock->requests;
is_deeply([ map { $_->{function}{name} } @{ $reqs[-1]{body}{tools} } ],
          ['load_csv_data'], 'down: only the built-in tool offered');
like($t->slurp('error.log'), qr/MCP server "down" at "http:\/\/127\.0\.0\.1:1\/mcp": initialize failed/,
     'down: logged');

$t->check_log;
done_testing;
