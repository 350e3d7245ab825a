#!/usr/bin/perl
# Crons (issue 32, item 3): the LangGraph API's /runs/crons and
# /threads/{id}/runs/crons, driven by the JS SDK's client.crons; their
# next runs as cron(8) and the IANA zones say (checked against Python's
# zoneinfo); each tick fired once with two workers and a second host on
# the same store, by the cron's owner, on a thread or each time on a
# thread of its own (kept, or deleted after); a disabled, ended or
# deleted cron fires nothing; deleting a thread deletes its crons; bad
# schedules, zones and times refused.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use IO::Socket::INET;

my $t = AgentTest->new;
my $dir = $t->dir;

# the model: each request's last message a line of a file
$t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1]{content} // '';
    open my $fh, '>>', "$dir/asked" or die;
    print $fh "$last\n";
    close $fh;
    return { text => "done: $last" };
});

my $conf = $t->conf(http => 'agent_owner $http_x_user;');
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
            agent_webhooks http://127.0.0.1:1/hooks/; }
        $1};
$t->run($conf);

my %alice = ('X-User' => 'alice');
my %bob = ('X-User' => 'bob');
sub lg { my ($m, $p, $b, %h) = @_; return $t->http($m, "/lg$p", $b,
                                                      %h ? %h : %alice) }

sub asked {
    my ($text) = @_;
    open my $fh, '<', "$dir/asked" or return 0;
    return scalar grep { $_ eq "$text\n" } <$fh>;
}

# --- next runs: cron(8)'s fields, IANA zones --------------------------------

my $py = <<'PY';
import sys, json, datetime, zoneinfo
names = {'jan':1,'feb':2,'mar':3,'apr':4,'may':5,'jun':6,'jul':7,'aug':8,
         'sep':9,'oct':10,'nov':11,'dec':12,'sun':0,'mon':1,'tue':2,'wed':3,
         'thu':4,'fri':5,'sat':6}
def field(s, lo, hi):
    out = set()
    for item in s.split(','):
        step = 1
        if '/' in item:
            item, st = item.split('/'); step = int(st)
        if item in ('*', '?'):
            a, b = lo, hi
        elif '-' in item:
            a, b = [int(names.get(x.lower(), x)) for x in item.split('-')]
        else:
            a = int(names.get(item.lower(), item)); b = hi if step > 1 else a
        out |= set(range(a, b + 1, step))
    return out
def nxt(expr, tz, now):
    f = expr.split()
    mi, h, dom, mon, dow = (field(f[0], 0, 59), field(f[1], 0, 23),
        field(f[2], 1, 31), field(f[3], 1, 12), field(f[4], 0, 7))
    if 7 in dow: dow.add(0)
    star = f[2][0] in '*?' or f[4][0] in '*?'
    z = zoneinfo.ZoneInfo(tz or 'UTC')
    t = (now // 60 + 1) * 60
    for _ in range(60 * 24 * 366 * 5):
        l = datetime.datetime.fromtimestamp(t, z)
        wd = (l.weekday() + 1) % 7
        dm, dw = l.day in dom, wd in dow
        if (l.minute in mi and l.hour in h and l.month in mon
                and ((dm and dw) if star else (dm or dw))):
            return datetime.datetime.fromtimestamp(t, datetime.timezone.utc
                ).strftime('%Y-%m-%dT%H:%M:%S+00:00')
        t += 60
    return None
now = int(sys.argv[1])
print(json.dumps([nxt(e, z, now) for e, z in json.loads(sys.argv[2])]))
PY
open my $pf, '>', "$dir/cron.py" or die;
print $pf $py;
close $pf;

my @cases = (
    [ '*/15 * * * *', undef ], [ '0 9 * * MON-FRI', 'America/New_York' ],
    [ '30 12 1,15 * *', 'Europe/Paris' ], [ '0 0 * * 7', 'Australia/Lord_Howe' ],
    [ '5 4 * * sun', 'Pacific/Chatham' ], [ '0 12 13 * 5', 'UTC' ],
    [ '45 23 * * *', 'Asia/Kolkata' ], [ '0 0 29 2 *', undef ],
    [ '0 */6 * jan-mar,oct *', 'America/Sao_Paulo' ],
    [ '7 5-9/2 * * 1,3', 'Asia/Tokyo' ],
);
for my $c (@cases) {
    my $before = time;
    my $r = lg('POST', '/runs/crons', { assistant_id => 'react',
        schedule => $c->[0], timezone => $c->[1], enabled => JSON::PP::false,
        metadata => { oracle => 1 } });
    my $after = time;
    is($r->{status}, 200, "cron \"$c->[0]\" made")
        or diag($r->{content});
    my @want;
    for my $at ($before, $after) {
        open my $fh, '-|', 'python3', "$dir/cron.py", $at,
             encode_json([ [ $c->[0], $c->[1] ] ]) or die $!;
        local $/;
        push @want, decode_json(<$fh>)->[0];
    }
    my $got = $r->{json}{next_run_date} // '';
    ok($got eq $want[0] || $got eq $want[1],
       "its next run in " . ($c->[1] // 'UTC') . " as zoneinfo says")
        or diag("$got, not $want[0]");
}

my $r = lg('POST', '/runs/crons/count', { metadata => { oracle => 1 } });
is($r->{json}, scalar @cases, 'counted by metadata');
$r = lg('POST', '/runs/crons/search', { metadata => { oracle => 1 },
                                        limit => 100 });
for my $c (@{ $r->{json} }) {
    lg('DELETE', "/runs/crons/$c->{cron_id}");
}
is(lg('POST', '/runs/crons/count', {})->{json}, 0, 'and deleted');

# --- bad input ----------------------------------------------------------------

for my $bad ([ { schedule => '* * * *' }, 'four fields' ],
             [ { schedule => '60 * * * *' }, 'minute 60' ],
             [ { schedule => '* * 31 2 *' }, 'February 31st' ],
             [ { schedule => '*/0 * * * *' }, 'a step of 0' ],
             [ { schedule => 'JAN * * * *' }, 'a name in the wrong field' ],
             [ { schedule => 42 }, 'a number' ],
             [ {}, 'no schedule' ],
             [ { schedule => '* * * * *', timezone => '../../etc/passwd' },
               'a zone that is a path' ],
             [ { schedule => '* * * * *', timezone => 'posix/UTC' },
               'a zone outside the plain ones' ],
             [ { schedule => '* * * * *', end_time => 'tomorrow' },
               'an end that is no time' ],
             [ { schedule => '* * * * *', end_time => '2026-02-30T00:00:00Z' },
               'an end on a day that is not' ],
             [ { schedule => '* * * * *', enabled => 'yes' },
               'enabled not a boolean' ],
             [ { schedule => '* * * * *', on_run_completed => 'drop' },
               'on_run_completed neither delete nor keep' ],
             [ { schedule => '* * * * *', metadata => [] },
               'metadata not an object' ],
             [ { schedule => '* * * * *',
                 webhook => 'http://127.0.0.1:2/hooks/' },
               'a webhook agent_webhooks does not allow' ]) {
    $r = lg('POST', '/runs/crons', { assistant_id => 'react', %{ $bad->[0] } });
    is($r->{status}, 422, "refused: $bad->[1]");
}
$r = lg('POST', '/runs/crons', '{"assistant_id": "react", "schedule": ');
is($r->{status}, 400, 'a body that is not JSON: 400');
$r = lg('POST', '/runs/crons', { schedule => '* * * * *' });
is($r->{status}, 422, 'no assistant_id: 422');

# --- the SDK: made, searched, counted, updated, deleted -----------------------

my $th = lg('POST', '/threads', {})->{json}{thread_id};
my $bth = lg('POST', '/threads', {}, %bob)->{json}{thread_id};

# the crons below fire each minute: made, and the second host started,
# early in a minute, so that no tick comes before the ticks' section
sleep 62 - time % 60 if time % 60 > 30;

local $ENV{AGENT_SDK_HEADERS} = encode_json(\%alice);
my $s = $t->lg_sdk("http://127.0.0.1:" . $t->port . "/lg", 'crons', 'react',
                   $th);
plan skip_all => 'the JS SDK cannot be installed' unless $s;

my $mine = $s->{create_thread};
is($mine->{thread_id}, $th, 'a cron of a thread');
is($mine->{schedule}, '* * * * *', 'its schedule');
is($mine->{user_id}, 'alice', 'its owner');
is_deeply($mine->{payload}{input}{messages}[0]{content}, 'tick-thread',
          'its run\'s input in its payload');
like($mine->{next_run_date}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\+00:00$/,
     'its next run, a whole minute');
is($mine->{on_run_completed}, undef, 'a cron of a thread keeps its thread');
is($s->{create_keep}{thread_id}, undef, 'a cron without a thread');
is($s->{create_keep}{on_run_completed}, 'keep', 'whose threads are kept');
is($s->{create_delete}{on_run_completed}, 'delete',
   'or deleted (the default)');
is($s->{create_delete}{timezone}, 'Asia/Kolkata', 'in a zone');
is($s->{create_ended}{next_run_date}, undef, 'one that ended runs no more');
ok(!$s->{disabled}{enabled}, 'one disabled');
is($s->{updated}{timezone}, 'Europe/Paris', 'one updated');
is_deeply($s->{updated}{metadata}, { job => 'thread', more => 1 },
          'its metadata merged');
is($s->{updated}{created_at}, $mine->{created_at}, 'made when it was');
is($s->{delete}, undef, 'one deleted');
is($s->{delete_again}{error}{status}, 404, 'then not found');

my @all = @{ $s->{search} };
is(scalar @all, 5, 'the owner\'s five crons found');
is(scalar @{ $s->{search_thread} }, 1, 'one of its thread');
is($s->{search_meta}[0]{payload}{input}{messages}[0]{content}, 'tick-keep',
   'one by its metadata');
is(scalar @{ $s->{search_enabled} }, 1, 'one disabled');
my @ids = sort map { $_->{cron_id} } @all;
is_deeply([ map { $_->{cron_id} } @{ $s->{search_sorted} } ], [ @ids[1, 2] ],
          'sorted by id, a page of two');
is_deeply([ sort keys %{ $s->{search_sorted}[0] } ], [ 'cron_id', 'schedule' ],
          'their fields as selected');
is($s->{count}, 5, 'counted');
is($s->{count_thread}, 1, 'counted by thread');
is($s->{bad_schedule}{error}{status}, 422, 'a bad schedule: 422');
is($s->{bad_zone}{error}{status}, 422, 'an unknown zone: 422');
is($s->{no_assistant}{error}{status}, 404, 'an unknown assistant: 404');
is($s->{no_thread}{error}{status}, 404, 'an unknown thread: 404');
is($s->{update_unknown}{error}{status}, 404, 'updating an unknown cron: 404');

# --- another owner ------------------------------------------------------------

is(lg('POST', '/runs/crons/count', {}, %bob)->{json}, 0,
   'another owner sees none of them');
is(lg('PATCH', "/runs/crons/$mine->{cron_id}", { enabled => JSON::PP::false },
      %bob)->{status}, 404, 'nor updates one');
is(lg('DELETE', "/runs/crons/$mine->{cron_id}", undef, %bob)->{status}, 404,
   'nor deletes one');
is(lg('POST', "/threads/$bth/runs/crons", { assistant_id => 'react',
      schedule => '* * * * *' })->{status}, 404,
   'nor makes one on another owner\'s thread');

# --- the ticks: two workers here, a second host on the same store -------------

my $b = AgentTest->new;
(my $bconf = $conf) =~ s/%%MOCK%%/$t->{mock}->port/ge;
$bconf =~ s{agent_checkpoint_db \S+;}{agent_checkpoint_db $dir/agent.db;};
$b->run($bconf);
ok(IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $b->port),
   'a second host on the same store');

my $kept0 = $t->sqlite("$dir/agent.db", "SELECT count(*) FROM sessions");
my %base = map { $_ => asked($_) } qw(tick-thread tick-keep tick-delete);
sub ticks { asked($_[0]) - $base{$_[0]} }

for my $tick (1, 2) {
    # past the next whole minute, and the tick's runs' ends
    my $wait = 60 - time % 60 + 6;
    sleep $wait;
    ok(AgentTest::wait_for(sub { ticks('tick-thread') >= $tick
                                 && ticks('tick-keep') >= $tick
                                 && ticks('tick-delete') >= $tick }, 20),
       "tick $tick: each cron fired");
    sleep 2;
    is(ticks('tick-thread'), $tick, "tick $tick: the thread's cron once");
    is(ticks('tick-keep'), $tick, "tick $tick: the kept one once");
    is(ticks('tick-delete'), $tick, "tick $tick: the deleted one once");
}
is(asked('tick-off') + asked('tick-ended') + asked('tick-gone'), 0,
   'disabled, ended and deleted crons fired nothing');

my $runs = lg('GET', "/threads/$th/runs")->{json};
is(scalar @$runs, 2 + $base{'tick-thread'},
   'the thread has a run of each tick');
is($runs->[0]{metadata}{cron_id}, $mine->{cron_id},
   'each with its cron in its metadata');
is($runs->[0]{metadata}{job}, 'thread', 'and the cron\'s metadata');
is($runs->[0]{status}, 'success', 'ended');
my $state = lg('GET', "/threads/$th/state")->{json};
is($state->{values}{messages}[-1]{content}, 'done: tick-thread',
   'the thread holds the answer');

my $kept = $t->sqlite("$dir/agent.db", "SELECT count(*) FROM sessions");
is($kept - $kept0, 2, 'a kept thread of each tick, none of the deleted ones');
my $owners = $t->sqlite("$dir/agent.db",
                        "SELECT DISTINCT owner FROM sessions ORDER BY owner");
is($owners, "alice\nbob", 'threads made by the ticks are their owner\'s')
    or diag($owners);

# a thread deleted takes its crons with it, as LangGraph's does
is(lg('DELETE', "/threads/$th")->{status}, 204, 'the cron\'s thread deleted');
is(lg('POST', '/runs/crons/count', { thread_id => $th })->{json}, 0,
   'and its cron with it');
is(lg('POST', '/runs/crons/count', {})->{json}, 4, 'the others stay');

$b->stop;
done_testing;
