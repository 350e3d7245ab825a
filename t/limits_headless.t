#!/usr/bin/perl
# Runs without a client keep their limits (issue 48, item 8): a zone keyed
# on a header ($http_x_tenant) is empty on a cron's tick or a take-over,
# which have no client.  The keys of the request that made the cron, or
# the run, are kept with it, and its runs without a client count under
# them: a tick of a tenant whose turns are spent is refused (the log says
# why), another tenant's tick runs; a run taken over after its worker was
# killed is refused too once its tenant's turns are spent, and ends
# "error".  nginx -t warns of a key that can be empty.  A store of an
# earlier version (SQLite, PostgreSQL) is given the new column.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
my $dir = $t->dir;

# the model: each request's last message a line of a file; "slow" hangs
# the first time (its worker is killed then), answers at once after
$t->mock(sub {
    my ($req) = @_;
    my $last = AgentTest::last_user($req);
    open my $fh, '>>', "$dir/asked" or die;
    print $fh "$last\n";
    close $fh;
    if ($last eq 'slow' && !-e "$dir/slow") {
        open my $s, '>', "$dir/slow" or die;
        close $s;
        return { text => 'never ' x 60, pieces => [ ('never ') x 60 ],
                 delay => 0.5 };
    }
    return { text => "done: $last" };
});

my $conf = $t->conf(http => <<'HTTP');
agent_limit_zone tenants key=$http_x_tenant size=1m;
agent_limit_zone hosts key=$remote_addr size=1m;
agent_graph once {
    node model llm;
    edge START model;
    edge model END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
            agent_use_graph once; agent_turn_lease 3s;
            agent_run_attempts 1;
            agent_limit zone=tenants turns=2/1h; }
        $1};

# --- nginx -t: a key made only of what a client may leave out -------------

$t->write_conf($conf);
my ($ok, $out) = $t->test_conf;
ok($ok, 'the configuration passes nginx -t') or diag($out);
like($out, qr/\[warn\] agent_limit_zone "tenants": key "\$http_x_tenant" can be empty; requests without it are not limited/,
     'nginx -t warns of a key that can be empty');
unlike($out, qr/agent_limit_zone "hosts"/, 'not of one that cannot');

$t->run($conf);

my $db = "$dir/agent.db";
sub lg {
    my ($m, $p, $b, $tenant) = @_;
    return $t->http($m, "/lg$p", $b, 'X-Tenant' => $tenant);
}
sub asked {
    my ($text) = @_;
    open my $fh, '<', "$dir/asked" or return 0;
    return scalar grep { $_ eq "$text\n" } <$fh>;
}
sub wait_run {
    my ($tenant, $th, $text) = @_;
    return lg('POST', "/threads/$th/runs/wait", { assistant_id => 'once',
        input => { messages => [ { role => 'user', content => $text } ] } },
        $tenant);
}

# --- a cron's tick counts under its maker's tenant ---------------------------

my %th = map { $_ => lg('POST', '/threads', {}, $_)->{json}{thread_id} }
         qw(a b c);
my %cron;
for my $tenant (qw(a b)) {
    # made disabled: it fires when the test says, not at a minute's turn
    my $r = lg('POST', "/threads/$th{$tenant}/runs/crons", {
        assistant_id => 'once', schedule => '* * * * *',
        enabled => JSON::PP::false,
        input => { messages => [ { role => 'user',
                                   content => "tick-$tenant" } ] } },
        $tenant);
    is($r->{status}, 200, "the cron of tenant $tenant made")
        or diag($r->{content});
    $cron{$tenant} = $r->{json}{cron_id};
}
is($t->sqlite($db, "SELECT limit_keys FROM crons "
              . "WHERE cron_id = '$cron{a}'"), '{"tenants":"a"}',
   'the cron keeps the key of the request that made it');

# tenant a spends its turns
is(wait_run('a', $th{a}, "spend-$_")->{status}, 200, "tenant a's turn $_")
    for 1, 2;
my $r = wait_run('a', $th{a}, 'spend-3');
is($r->{status}, 429, 'its third turn in the hour: 429');

$t->sqlite($db, "UPDATE crons SET enabled = 1, next_run = " . time
           . " WHERE cron_id IN ('$cron{a}', '$cron{b}')");

ok(AgentTest::wait_for(sub { asked('tick-b') }, 30),
   'tenant b\'s tick runs');
ok(AgentTest::wait_for(sub {
    $t->sqlite($db, "SELECT limit_keys FROM runs "
               . "WHERE thread_id = '$th{b}'") eq '{"tenants":"b"}' }, 10),
   'its run keeps the key of the request that made the cron');
ok(AgentTest::wait_for(sub {
    my $log = $t->slurp('error.log');
    $log =~ /cron "$cron{a}" fires/
        && ($log =~ /refused: the limit of turns of "a" is reached/
            || asked('tick-a')) }, 30), 'tenant a\'s tick fired');
is(asked('tick-a'), 0, 'tenant a\'s tick ran no turn: its turns are spent');
like($t->slurp('error.log'),
     qr/a run without a client is refused: the limit of turns of "a" is reached \(agent_limit zone=tenants\)/,
     'the log says why');
my $runs = lg('GET', "/threads/$th{a}/runs", undef, 'a')->{json};
is(scalar(grep { ($_->{metadata}{cron_id} // '') eq $cron{a} } @$runs), 0,
   'no run of the tick on its thread');

# --- a run taken over counts under its client's tenant -----------------------

is(wait_run('c', $th{c}, 'spend-c')->{status}, 200, "tenant c's first turn");
$r = lg('POST', "/threads/$th{c}/runs", { assistant_id => 'once',
    input => { messages => [ { role => 'user', content => 'slow' } ] } },
    'c');
is($r->{status}, 200, 'its second, in the background');
my $run = $r->{json}{run_id};
is($t->sqlite($db, "SELECT limit_keys FROM runs WHERE run_id = '$run'"),
   '{"tenants":"c"}', 'the run keeps the key of the request that made it');
ok(AgentTest::wait_for(sub { -e "$dir/slow" }, 20), 'it hangs in its model');
my $holder = $t->sqlite($db, "SELECT run_pid FROM sessions "
                        . "WHERE id = '$th{c}'");
like($holder, qr/^\d+$/, 'a worker holds the thread');
kill 'KILL', $holder;

# its take-over would be tenant c's third turn in the hour
my $st = '';
ok(AgentTest::wait_for(sub {
    $st = lg('GET', "/threads/$th{c}/runs/$run", undef, 'c')->{json}{status}
          // '';
    $st ne 'running' && $st ne 'pending' }, 60), "the run ended: $st");
is($st, 'error', 'refused, it ends "error"');
is(asked('slow'), 1, 'the model was not asked again');
like($t->slurp('error.log'),
     qr/a run without a client is refused: the limit of turns of "c" is reached/,
     'the log says why');

# --- a store of an earlier version: the column added as it opens -----------

$t->stop;
$t->sqlite($db, "ALTER TABLE $_ DROP COLUMN limit_keys") for qw(runs crons);
$t->sqlite($db, 'DELETE FROM agent_schema WHERE version >= 8') if $ENV{AGENT_PG};
$t->run($conf);
$r = lg('POST', "/threads/$th{b}/runs/crons", { assistant_id => 'once',
    schedule => '* * * * *', enabled => JSON::PP::false }, 'b');
is($r->{status}, 200, 'a cron made in a store of an earlier version')
    or diag($r->{content});
is($t->sqlite($db, "SELECT limit_keys FROM crons "
              . "WHERE cron_id = '$r->{json}{cron_id}'"), '{"tenants":"b"}',
   'with its key');
is(wait_run('b', $th{b}, 'after')->{status}, 200, 'a run too');

$t->check_log(allow => qr/exited on signal 9/);
done_testing;
