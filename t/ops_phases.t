#!/usr/bin/perl
# The bench's clock per phase (make bench-phases, docs/performance.md):
# with NGX_AGENT_PHASES=PREFIX passed by nginx's env directive, a worker
# that exits writes PREFIX.PID with each phase's count and samples, and a
# turn with a tool call is seen in every phase it goes through.  Without
# it, nothing is written.  No time is asserted: only that each phase was
# seen, as often as the turn has it.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    return { text => 'two rows' }
        if grep { $_->{role} eq 'tool' } @{ $req->{messages} };
    return { tools => [[ 'c1', 'execute_sql_query',
                         '{"query": "SELECT 1 AS one"}' ]] };
});

my $conf = $t->conf;
$conf =~ s/^(load_module [^\n]*\n)/${1}env NGX_AGENT_PHASES;\n/m;

sub phases {
    my %seen;
    for my $f (glob $t->dir . '/phases.*') {
        open my $fh, '<', $f or die $!;
        while (<$fh>) {
            $seen{$1} += $2 if /^(\w+) count (\d+)/;
        }
    }
    return \%seen;
}

# --- off: nothing kept, nothing written ---------------------------------

delete $ENV{NGX_AGENT_PHASES};
$t->run($conf);
my $r = $t->turn($t->session, 'how many rows?');
is($r->{events}[-1]{full_response}, 'two rows',
   'a turn ends without the clock');
$t->stop;
is_deeply(phases(), {}, 'no clock asked: no file');

# --- on: each phase of a turn with a tool call ----------------------------

$ENV{NGX_AGENT_PHASES} = $t->dir . '/phases';
$t->run($conf);
for (1 .. 3) {
    $r = $t->turn($t->session, 'how many rows?');
    is($r->{events}[-1]{full_response}, 'two rows',
       "turn $_ ends with the clock on");
}
$t->stop;
delete $ENV{NGX_AGENT_PHASES};

my $p = phases();
is($p->{parse}, 3, 'a request parsed per turn');
is($p->{begin}, 3, 'a begin per turn');
is($p->{end}, 3, 'an end per turn');
is($p->{request}, 6, 'two model requests built per turn');
is($p->{curl}, 6, '... each handed to curl');
is($p->{sql}, 3, 'one SQL hand-off per turn');
cmp_ok($p->{answer}, '>=', 6, 'the answers read in chunks');
SKIP: {
    # the store's phases time SQLite's statements; PostgreSQL's are sent
    # and answered on the event loop, where their wait is not their cost
    skip 'the store is PostgreSQL (AGENT_PG)', 2 if $ENV{AGENT_PG};
    cmp_ok($p->{write}, '>=', 6, 'store statements that write');
    cmp_ok($p->{read}, '>=', 3, '... and that read');
}
cmp_ok($p->{event}, '>=', 9, 'events encoded');

done_testing;
