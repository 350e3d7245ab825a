#!/usr/bin/perl
# Faulty peers are bounded (issue 28, item 8).  An MCP server that answers
# 404 to tools/list costs a worker a few requests, each failure logged,
# then a back-off; a server slow to list holds a turn no longer than its
# timeout=.  A model that calls a slow location tool 16 times at once
# holds at most agent_tool_concurrency upstream connections, also after
# the calls timed out.  timeout= on ask_database, which waits on a model,
# fires on time.  A location tool that points at an agent location is
# refused: one run, not a run per call.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use JSON::PP;
use Fcntl qw(:flock);
use Time::HiRes qw(time sleep);

my $root = AgentTest::root();
my $json = JSON::PP->new->canonical;

# the model: a call of the tool its node offers, then an answer
sub caller_script {
    my ($calls, $args) = @_;
    return sub {
        my ($req) = @_;
        my @m = @{ $req->{messages} };
        my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
        return { text => 'done' }
            if grep { $_->{role} eq 'tool' } @m[$u .. $#m];
        my @offered = map { $_->{function}{name} } @{ $req->{tools} // [] };
        return { text => 'no tools' } unless @offered;
        return { tools => [ map { [ "c$_", $offered[0], $args // '{}' ] }
                            1 .. $calls ] };
    };
}

# ---- 1. an MCP server that answers 404 to tools/list, one slow to list

{
    my $t = AgentTest->new;
    my $mcp_script = sub {
        my ($slow) = @_;
        return sub {
            my ($b) = @_;
            my $m = $b->{method} // '';
            my $d = $slow ? 0.6 : 0;
            my $ok = sub { { status => 200, delay => $d,
                             headers => { 'Mcp-Session-Id' => 's-1' },
                             body => $json->encode({ jsonrpc => '2.0',
                                 id => $b->{id}, result => $_[0] }) } };
            return $ok->({ protocolVersion => '2025-06-18',
                           capabilities => {},
                           serverInfo => { name => 'x', version => '1' } })
                if $m eq 'initialize';
            return { status => 202, delay => $d, body => '' }
                if $m eq 'notifications/initialized';
            return $ok->({ tools => [ { name => 'one',
                                        inputSchema => { type => 'object' } }
                                    ] })
                if $m eq 'tools/list' && $slow;
            return { status => 404, delay => $d, body => 'no such session' }
                if $m eq 'tools/list';
            return { status => 400, delay => $d, body => 'unknown method' };
        };
    };
    my $bad = MockLLM->new(dir => $t->dir, name => 'bad',
                           script => $mcp_script->(0));
    my $slow = MockLLM->new(dir => $t->dir, name => 'slow',
                            script => $mcp_script->(1));
    $t->mock(caller_script(1));

    my ($bp, $sp) = ($bad->port, $slow->port);
    my $conf = $t->conf(workers => 1, location => 'agent_use_graph bad;',
                        http => <<"HTTP");
agent_prompts $root/prompts;
agent_mcp bad url=http://127.0.0.1:$bp/mcp timeout=2s;
agent_mcp slow url=http://127.0.0.1:$sp/mcp timeout=1s;
agent_graph bad {
    node agent llm prompt=react_system.md tools=bad.*;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
agent_graph slow {
    node agent llm prompt=react_system.md tools=slow.*;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
HTTP
    $conf =~ s{(location /api/sessions/)}
              {location /slow/ { agent_chat; agent_use_graph slow; }
        $1};
    $t->run($conf);

    my $sid = $t->session;
    my $t0 = time;
    my ($turns, $ended) = (0, 0);

    while (time - $t0 < 3.5) {
        my $r = $t->turn($sid, "turn $turns", timeout => 6);
        $turns++;
        $ended++ if ($r->{types}[-1] // '') eq 'end';
        sleep 0.2;
    }

    my $n = () = $bad->requests;
    is($ended, $turns, "404 to tools/list: each of $turns turns ends");
    ok($n > 0 && $n <= 30, "and the server got $n requests in 3.5 s, "
       . 'not a loop');
    my $log = $t->slurp('error.log');
    like($log, qr/MCP server "bad" at "[^"]+": tools\/list failed: it answered 404 to a new session too, next try in 1000 ms \(failure 1\)/,
         'the failure is logged with its back-off');
    like($log, qr/next try in 2000 ms \(failure 2\)/,
         'and the back-off doubles');

    # a server whose start takes 4 x 0.6 s: the turn waits 1 s, not 2.4
    $t0 = time;
    my $r = $t->stream("/slow/$sid/message",
                       encode_json({ message => 'slow list' }),
                       timeout => 10);
    my $took = time - $t0;
    is($r->{types}[-1], 'end', 'a server slow to list: the turn ends');
    ok($took < 2.0, sprintf('within its timeout=1s, not after the whole '
                            . 'start (%.2f s)', $took));
    like($t->slurp('error.log'),
         qr/MCP server "slow" gave no tools list within its timeout=, its tools left out/,
         'and the log says why');
    $t->check_log;
}

# ---- 2. sixteen calls of a slow location tool: at most 4 at once

{
    my $t = AgentTest->new;
    my $times = $t->dir . '/svc-times';
    my $svc = MockLLM->new(dir => $t->dir, name => 'svc', script => sub {
        open my $fh, '>>', $times or die;
        flock($fh, LOCK_EX);
        printf $fh "%.3f\n", time;
        close $fh;
        return { status => 200, delay => 1, body => '{"late": true}' };
    });
    $t->mock(caller_script(16));

    # an MCP server whose calls take 0.5 s, recorded the same way
    my $mtimes = $t->dir . '/mcp-times';
    my $mcp = MockLLM->new(dir => $t->dir, name => 'work', script => sub {
        my ($b) = @_;
        my $m = $b->{method} // '';
        my $ok = sub { { status => 200, body => $json->encode({
                         jsonrpc => '2.0', id => $b->{id},
                         result => $_[0] }) } };
        return $ok->({ protocolVersion => '2025-06-18', capabilities => {},
                       serverInfo => { name => 'w', version => '1' } })
            if $m eq 'initialize';
        return { status => 202, body => '' }
            if $m eq 'notifications/initialized';
        return $ok->({ tools => [ { name => 'work', inputSchema => {
                                    type => 'object' } } ] })
            if $m eq 'tools/list';
        return { status => 400, body => 'unknown method' }
            if $m ne 'tools/call';
        open my $fh, '>>', $mtimes or die;
        flock($fh, LOCK_EX);
        printf $fh "%.3f\n", time;
        close $fh;
        return { %{ $ok->({ content => [ { type => 'text',
                                           text => 'worked' } ] }) },
                 delay => 0.5 };
    });

    my $sp = $svc->port;
    my $mp = $mcp->port;
    my $conf = $t->conf(location => 'agent_use_graph located;',
                        http => <<"HTTP");
agent_prompts $root/prompts;
agent_tool_concurrency 4;
agent_tool slow location=/internal/slow timeout=300ms;
agent_mcp work url=http://127.0.0.1:$mp/mcp;
agent_graph mcpcap {
    node agent llm prompt=react_system.md tools=work.*;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
agent_graph located {
    node agent llm prompt=react_system.md tools=slow;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
HTTP
    $conf =~ s{(location /api/sessions/)}
              {location /internal/slow { internal; proxy_pass http://127.0.0.1:$sp/slow; }
        location /mcpcap/ { agent_chat; agent_use_graph mcpcap; }
        $1};
    $t->run($conf);

    my $sid = $t->session;
    my $r = $t->turn($sid, 'sixteen at once', timeout => 30);
    is($r->{types}[-1], 'end', 'sixteen calls of a slow location: the turn '
       . 'ends');
    my @res = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
    is(scalar(grep { ($_->{content}{error} // '')
                     =~ /did not answer within 300 ms/ } @res), 16,
       'each call an error result after its timeout');

    sleep 1.5;    # the last subrequests run out
    open my $fh, '<', $times or die;
    my @starts = sort { $a <=> $b } map { chomp; $_ } <$fh>;
    close $fh;
    is(scalar @starts, 16, 'every call reached the service in the end');
    my $max = most_at_once(1, @starts);
    ok($max <= 4, "at most agent_tool_concurrency=4 upstream requests at "
       . "once, timed-out ones counted till they end ($max)");

    # the same cap on the calls of an MCP server's tool
    $r = $t->stream("/mcpcap/$sid/message",
                    encode_json({ message => 'sixteen MCP calls' }),
                    timeout => 30);
    is($r->{types}[-1], 'end', 'sixteen MCP calls: the turn ends');
    is(scalar(grep { $_->{type} eq 'tool_result'
                     && ($_->{content} // '') eq 'worked' }
              @{ $r->{events} }), 16, 'each answered');
    open $fh, '<', $mtimes or die;
    my @calls = map { chomp; $_ } <$fh>;
    close $fh;
    $max = most_at_once(0.5, @calls);
    ok($max <= 4, "at most 4 MCP calls at once ($max)");
    $t->check_log;
}

# the most intervals [start, start + len) that hold one instant
sub most_at_once {
    my ($len, @starts) = @_;
    my $max = 0;
    for my $s (@starts) {
        my $at = grep { $_ <= $s + 0.01 && $_ + $len > $s + 0.01 } @starts;
        $max = $at if $at > $max;
    }
    return $max;
}

# ---- 3. timeout=500ms on ask_database, whose model is slow

{
    my $t = AgentTest->new;
    my $db = $t->dir . '/shop.db';
    system('sqlite3', $db, 'CREATE TABLE sales (region TEXT, total REAL);')
        == 0 or die 'sqlite3 failed';
    my $ask = caller_script(1, '{"query": "totals"}');
    $t->mock(sub {
        my ($req) = @_;
        return { text => 'SELECT 1', first_delay => 3 }
            if $req->{messages}[0]{content} =~ /^You write one SQLite/;
        return $ask->($req);
    });
    my $conf = $t->conf(location => 'agent_use_graph asker; '
                        . 'agent_databases shop; agent_use_database shop;',
                        http => <<"HTTP");
agent_prompts $root/prompts;
agent_database shop $db;
agent_graph asker {
    node agent llm prompt=react_system.md tools=ask_database;
    node tools tools timeout=500ms;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
HTTP
    $t->run($conf);

    my $sid = $t->session;
    $t->http('POST', "/api/chat/$sid/connection", { database => 'shop' });
    my $r = $t->turn($sid, 'totals?');
    is($r->{types}[-1], 'end', 'ask_database past its timeout: the turn ends');
    my ($start) = grep { $_->{type} eq 'tool_start' } @{ $r->{events} };
    my ($end) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
    like($end->{content}{error} // '', qr/did not answer within 500 ms/,
         'an error result');
    my $took = $end->{_t} - $start->{_t};
    ok($took < 1.2, sprintf('timeout=500ms fires on time (%.2f s), not a '
                            . 'second late', $took));
    $t->check_log;
}

# ---- 4. a location tool that points at an agent location

{
    my $t = AgentTest->new;
    my $mock = $t->mock(caller_script(1, '{"message": "again"}'));
    my $conf = $t->conf(location => 'agent_use_graph looper;',
                        http => <<"HTTP");
agent_prompts $root/prompts;
agent_tool loop location=/nested/SESSION/message;
agent_graph looper {
    node agent llm prompt=react_system.md tools=loop;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
HTTP
    $conf =~ s{(location /api/sessions/)}
              {location /nested/ { agent_chat; agent_use_graph looper; }
        $1};
    $t->run($conf);

    # the tool points at a session of its own: each call would be a turn
    my $inner = $t->session;
    $t->stop;
    $conf =~ s/SESSION/$inner/;
    $t->run($conf);

    my $sid = $t->session;
    my $r = $t->turn($sid, 'loop');
    is($r->{types}[-1], 'end', 'a tool pointed at an agent location: the '
       . 'turn ends');
    my ($res) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
    my $err = ref $res->{content} eq 'HASH' ? $res->{content}{error} // ''
                                            : "nested: $res->{content}";
    like($err, qr/answered 403: .*an agent location is not a tool/,
         'the tool result is an error that says why');
    is(scalar(my @reqs = $mock->requests), 2,
       'one run only: two model calls, no nested turn');
    like($t->slurp('error.log'),
         qr/a tool or node of a turn called the agent location "\/nested\/[^"]+": refused/,
         'and the log says so');
    $t->check_log;
}

done_testing;
