#!/usr/bin/perl
# Interrupts (LangGraph's interrupt()): a node of kind interrupt stops the
# run with its value for a human; the state is saved with that node next;
# a message then is refused; POST /{id}/resume {"resume": ANSWER} continues
# the run where it waits, on any worker and after nginx -s reload, the
# answer written to a channel the graph routes on.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub { { text => 'unused' } });

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

$t->check_log;
done_testing;
