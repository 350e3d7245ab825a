#!/usr/bin/perl
# Interrupts (LangGraph's interrupt()): a node of kind interrupt stops the
# run with its value for a human; the state is saved with that node next;
# a message then is refused; POST /{id}/resume {"resume": ANSWER} continues
# the run where it waits, on any worker and after nginx -s reload, the
# answer written to a channel the graph routes on.  A tools node with
# approve=on shows the calls before they run: approved, edited, rejected.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my ($res) = grep { $_->{role} eq 'tool' } @m[$u .. $#m];
    return { text => "result: $res->{content}" } if $res;
    return { tools => [ [ 'q1', 'execute_sql_query',
                          '{"query": "SELECT 1 AS one"}' ] ] };
});

my $conf = $t->conf(http => <<'HTTP', location => 'agent_use_graph approval;');
agent_graph approval {
    channel plan     value scope=turn;
    channel approval value;

    node draft   template output=plan "text=Delete the rows of 2019?";
    node approve interrupt value=plan resume=approval;
    node act     template "text=Done: {{approval}}";
    node cancel  template "text=Cancelled.";

    edge START draft;
    edge draft approve;
    edge approve act "if=approval == 'yes'";
    edge approve cancel;
    edge act END;
    edge cancel END;
}
HTTP
$conf =~ s{(location /api/sessions/ \{ agent_sessions;)}{$1 agent_use_graph approval;};
$conf =~ s{(agent_graph approval \{)}{agent_graph guarded {
    node model llm prompt=react_system.md tools=execute_sql_query;
    node tools tools approve=on;
    edge START model;
    edge model tools if=tool_calls;
    edge model END;
    edge tools model;
}
$1};
$conf =~ s{(agent_graph approval \{)}{agent_graph stepwise {
    channel note value;
    node one   template output=note "text=one";
    node two   template "text=two after {{note}}" interrupt_before=on;
    node three template output=note "text=three" interrupt_after=on;
    node four  template "text=four after {{note}}";
    edge START one;
    edge one two;
    edge two three;
    edge three four;
    edge four END;
}
$1};
$conf =~ s{(location /api/sessions/)}{location /guarded/ { agent_chat; agent_use_graph guarded; }
        location /stepwise/ { agent_chat; agent_use_graph stepwise; }
        $1};
$t->run($conf);

sub state { $t->http('GET', "/api/sessions/$_[0]/state")->{json} }
sub resume {
    my ($sid, $body) = @_;
    return $t->stream("/api/chat/$sid/resume", encode_json($body));
}
sub nodes { [ map { $_->{name} } grep { $_->{type} eq 'node'
                                        && $_->{status} eq 'start' }
              @{ $_[0]->{events} } ] }

# 1. the run stops at the interrupt, with its value
my $sid = $t->session;
my $r = $t->turn($sid, 'clean up the table');
is_deeply(AgentTest::plain($r), [qw(start interrupt end)],
          'the turn ends with an interrupt')
    or diag explain $r->{types};
my ($ev) = grep { $_->{type} eq 'interrupt' } @{ $r->{events} };
is_deeply($ev->{data}, { node => 'approve', value => 'Delete the rows of 2019?' },
          'the interrupt names its node and carries the value');
ok($ev->{checkpoint_id}, 'and the checkpoint');
is_deeply(nodes($r), [qw(draft approve)], 'act has not run');
my $st = state($sid);
is_deeply($st->{values}{__interrupt__}, $ev->{data},
          'the state keeps the interrupt');

# 2. a message is refused while it waits
my $m = $t->http('POST', "/api/chat/$sid/message", { message => 'hello?' });
is($m->{status}, 409, 'a message while it waits: 409');
like($m->{json}{error}, qr/waits at "approve" for an answer: POST \/\{id\}\/resume/,
     'saying how to answer');
is(resume($sid, { answer => 'yes' })->{status}, 400,
   'a resume without "resume": 400');

# 3. answered after a reload: the run goes on where it waited
my @old = $t->worker_pids;
kill 'HUP', $t->{nginx};
ok(AgentTest::wait_for(sub {
    my %o = map { $_ => 1 } @old;
    (grep { !$o{$_} } $t->worker_pids)
    && !(grep { kill 0, $_ } @old) }, 10), 'nginx reloaded');

$r = resume($sid, { resume => 'yes' });
is($r->{types}[-1], 'end', 'resumed after the reload');
is_deeply(nodes($r), [qw(approve act)], 'from the interrupt, then act');
is($r->{events}[-1]{full_response}, 'Done: yes', 'the answer routed it');
$st = state($sid);
is($st->{values}{approval}, 'yes', 'the answer is in its channel');
ok(!defined $st->{values}{__interrupt__}, 'the interrupt is gone');
is($st->{values}{plan}, 'Delete the rows of 2019?',
   'the turn\'s channels were kept across the wait');

$m = $t->http('POST', "/api/chat/$sid/resume", { resume => 'yes' });
is($m->{status}, 409, 'nothing to resume: 409');

# 4. another round, rejected
$r = $t->turn($sid, 'clean up again');
is(AgentTest::plain($r)->[1], 'interrupt', 'a new interrupt');
$r = resume($sid, { resume => 'no' });
is($r->{events}[-1]{full_response}, 'Cancelled.', 'rejected: the other edge');

# 5. the one-shot JSON answer shows the interrupt in the state
$m = $t->http('POST', "/api/chat/$sid/message", { message => 'once more' },
              'Accept' => 'application/json');
is($m->{status}, 200, 'one-shot: 200');
is($m->{json}{state}{__interrupt__}{node}, 'approve',
   'one-shot: the interrupt in the state');

# 6. interrupt_before= and interrupt_after= on any node
my $w = $t->session;
$r = $t->stream("/stepwise/$w/message", encode_json({ message => 'go' }));
($ev) = grep { $_->{type} eq 'interrupt' } @{ $r->{events} };
is_deeply($ev->{data}, { node => 'two', value => undef, breakpoint => JSON::PP::true },
          'interrupt_before: waits before two');
is_deeply(nodes($r), ['one'], 'interrupt_before: two has not run');
$r = $t->stream("/stepwise/$w/resume", encode_json({ resume => 'go' }));
($ev) = grep { $_->{type} eq 'interrupt' } @{ $r->{events} };
is_deeply(nodes($r), [qw(two three)], 'resumed: two, then three');
is_deeply($ev->{data}, { node => 'four', value => undef, after => 'three',
                         breakpoint => JSON::PP::true },
          'interrupt_after: waits after three, before four');
$r = $t->stream("/stepwise/$w/resume", encode_json({ resume => 'go' }));
is_deeply(nodes($r), ['four'], 'resumed: four');
is($r->{events}[-1]{full_response}, 'four after three',
   'the state carried across both waits');
is($t->http('POST', "/stepwise/$w/resume", { resume => 1 })->{status}, 409,
   'and nothing waits any more');

# 7. approve=on: a human sees the calls before they run
my $g = $t->session;
sub guarded {
    my ($path, $body) = @_;
    return $t->stream("/guarded/$g/$path", encode_json($body));
}
sub result {
    my ($r) = @_;
    my ($e) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
    return $e ? $e->{content} : undef;
}

$r = guarded('message', { message => 'count' });
($ev) = grep { $_->{type} eq 'interrupt' } @{ $r->{events} };
is_deeply($ev->{data}, { node => 'tools', value => [ { id => 'q1',
              name => 'execute_sql_query',
              args => { query => 'SELECT 1 AS one' } } ],
              approve => JSON::PP::true },
          'approve: the calls shown before they run, marked as such');
ok(!(grep { $_->{type} eq 'tool_start' } @{ $r->{events} }),
   'approve: nothing ran');

$r = guarded('resume', { resume => 'approve' });
is_deeply(result($r)->{rows}, [[1]], 'approved: the call ran');
like($r->{events}[-1]{full_response}, qr/^result: /, 'approved: the model went on');

guarded('message', { message => 'count' });
$r = guarded('resume', { resume => { action => 'edit',
                                      args => { query => 'SELECT 2 AS two' } } });
is_deeply(result($r)->{rows}, [[2]], 'edited: the edited arguments ran');
my ($start) = grep { $_->{type} eq 'tool_start' } @{ $r->{events} };
is_deeply($start->{input}, { query => 'SELECT 2 AS two' },
          'edited: tool_start shows them');

guarded('message', { message => 'count' });
$r = guarded('resume', { resume => { action => 'reject',
                                      reason => 'not today' } });
is_deeply(result($r), { error => 'not run: a human rejected it (not today)' },
          'rejected: nothing ran, the call answers why');
like($r->{events}[-1]{full_response}, qr/rejected it \(not today\)/,
     'rejected: the model saw it and went on');

guarded('message', { message => 'count' });
$r = guarded('resume', { resume => 42 });
like(result($r)->{error}, qr/not approve, edit or reject/,
     'an answer of another shape: a rejection that says so');

$t->check_log;
done_testing;
