#!/usr/bin/perl
# MCP elicitation (issue 31, item 1): a tools/call whose run stops at an
# interrupt, on a session whose client declared elicitation, asks the
# client's user (elicitation/create on the call's stream) and answers with
# the resumed run's end; driven by the official MCP TypeScript SDK's
# client (npm, unchanged): accepted, asked twice, declined (then resumed
# by hand), the 2025-11-25 capability shape, url mode only (not asked), an
# answer too late; then by hand: answers of unknown ids, bad actions and
# content, another owner, no session, a result that is no object, a
# number, the same answer twice; a response to an A2A location.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $root = "$FindBin::Bin/..";
my $t = AgentTest->new;
my $sdk = AgentTest::npm('mcp', '@modelcontextprotocol/sdk',
                         '@modelcontextprotocol/sdk@1.32.2');

$t->mock(sub { return { text => 'unused' } });

my $conf = $t->conf(http => <<'HTTP');
agent_graph approval {
    channel plan value 'default="Delete the rows?"';
    channel answer value;
    node ask interrupt value=plan resume=answer;
    node done template "text=you said {{answer}}";
    edge START ask;
    edge ask done;
    edge done END;
}
agent_graph twice {
    channel q1 value 'default="Which colour?"';
    channel q2 value 'default="Which size?"';
    channel colour value;
    channel size value;
    node first interrupt value=q1 resume=colour;
    node second interrupt value=q2 resume=size;
    node done template "text={{size}} {{colour}}";
    edge START first;
    edge first second;
    edge second done;
    edge done END;
}
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
agent_use_graph chat;
HTTP
$conf =~ s{(location /api/chat/)}{location = /mcp { agent_mcp_server;
        agent_owner \$http_x_user; agent_assistants approval twice; }
    location = /mcp-short { agent_mcp_server; agent_owner \$http_x_user;
        agent_assistants approval; agent_mcp_server_elicitation 2s; }
    location = /a2a { agent_a2a; agent_owner \$http_x_user; }
    $1};
$t->run($conf);

my $url = 'http://127.0.0.1:' . $t->port . '/mcp';
my %o = AgentTest::observe("$root/t/mcp/elicit.mjs", $sdk, $url);

sub text { $_[0]{result}{content}[0]{text} // '' }
sub sc { $_[0]{result}{structuredContent} // {} }

like($o{session} // '', qr/^[0-9a-f-]{36}\.[0-9a-f]{16}e$/,
     'a client that takes elicitation: said in its Mcp-Session-Id');

# accepted
is(scalar @{ $o{accept}{asked} // [] }, 1, 'an interrupt: the user asked');
is($o{accept}{asked}[0]{message}, 'Delete the rows?',
   '... with what the run waits for');
is_deeply($o{accept}{asked}[0]{requestedSchema}{required}, ['answer'],
          '... an answer asked for');
is($o{accept}{asked}[0]{requestedSchema}{properties}{answer}{type}, 'string',
   '... a string');
is(text($o{accept}), 'you said yes', 'accepted: the resumed run\'s answer')
    or diag explain $o{accept};
is(sc($o{accept})->{status}, 'success', '... success');
ok(sc($o{accept})->{thread_id}, '... on its thread');

# asked twice on one call
is_deeply([ map { $_->{message} } @{ $o{twice}{asked} // [] } ],
          [ 'Which colour?', 'Which size?' ],
          'two interrupts: asked twice on one call');
is(text($o{twice}), 'big red', '... both answers in the result')
    or diag explain $o{twice};

# declined
is(scalar @{ $o{decline}{asked} // [] }, 1, 'declined: asked once');
is(sc($o{decline})->{status}, 'interrupted',
   '... the result: the run waits') or diag explain $o{decline};
like(text($o{decline}), qr/Delete the rows\?.*"resume"/s,
     '... what for, and how to answer');
is($o{accept_declined}{status}, 409,
   '... and an answer to it after the decline: 409')
    or diag explain $o{accept_declined};
is(text($o{after_decline}), 'you said later',
   '... answered by a call with resume');

# the capability's shapes
# (the flag is an "e" after the 16 hex digits of the digest, which may
# end in an "e" of their own)
like($o{form_session} // '', qr/\.[0-9a-f]{16}e$/,
     'elicitation {form: {}}: taken');
is(text($o{form}), 'you said sure', '... asked and answered');
like($o{url_session} // '', qr/\.[0-9a-f]{16}$/, 'url mode only: not ours');
is(scalar @{ $o{url}{asked} // [] }, 0, '... not asked');
is(sc($o{url})->{status}, 'interrupted', '... the interrupt as a result');

# too late
is(scalar @{ $o{late}{asked} // [] }, 1, 'an answer too late: asked');
is(sc($o{late})->{status}, 'interrupted',
   '... the result after agent_mcp_server_elicitation: the run waits')
    or diag explain $o{late};

# by hand
is($o{raw_ask}{method}, 'elicitation/create', 'by hand: the request');
like($o{raw_ask}{id} // '', qr{^elicit/[0-9a-f-]{36}/[^/]+/approval$},
     '... its id: the thread, the checkpoint, the graph');
for (['raw_unknown', 400, -32602, 'an unknown id'],
     ['raw_action', 400, -32602, 'an action of no such name'],
     ['raw_content', 400, -32602, 'an answer that is an object'],
     ['raw_bob', 404, -32602, 'another owner'],
     ['raw_nosession', 400, -32600, 'no session'],
     ['raw_noresult', 400, -32600, 'a result that is no object'])
{
    my ($k, $status, $code, $what) = @$_;
    is($o{$k}{status}, $status, "$what: $status") or diag explain $o{$k};
    my $b = eval { decode_json($o{$k}{body}) } // {};
    is($b->{error}{code}, $code, "... $code");
    ok(exists $b->{error} && !defined $b->{id}, '... naming no id')
        if $k ne 'raw_noresult';
}
is($o{raw_accept}{status}, 202, 'accepted: 202');
is($o{raw_result}{id}, 7, '... the call\'s result, its id');
is($o{raw_result}{result}{content}[0]{text}, 'you said 42',
   '... a number as the answer');
ok(!defined $o{raw_end}, '... and the stream ends');
is($o{raw_again}{status}, 409, 'the same answer again: 409')
    or diag explain $o{raw_again};

is($o{gone_answer}{status}, 202,
   'a client gone while held: its answer still taken');
like($o{gone_after} // '', qr/elicitation\/create/,
     '... the thread resumed by it (the next call runs the graph anew)')
    or diag $o{gone_after};

# a protocol that sends no request of its own takes no response
my $r = $t->http('POST', '/a2a', '{"jsonrpc": "2.0", "id": "x", '
                 . '"result": {}}', 'Content-Type' => 'application/json',
                 'X-User' => 'alice');
is($r->{json}{error}{code}, -32600, 'a response to A2A: invalid request');

$t->stop;
$t->check_log;
done_testing;
