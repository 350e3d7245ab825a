#!/usr/bin/perl
# Every stored document is bounded (issue 48, items 1 to 3) on the one road
# into the store (agent_max_document_size, here 256k), checked after a
# merge, and refused with a 422 that says why, whatever the protocol; every
# list answer stops at the answer budget, the first entry included.  An
# assistant's metadata grown by PATCHes, a thread's by PATCHes, a store
# value, an item over an owner's quota (agent_store_quota), a run's kwargs;
# then the lists: assistants' versions and search, threads' search, the
# store's search with limit=1000.  The workers' memory stays bounded.  On both
# stores.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $CAP = 256 * 1024;                   # agent_max_document_size below
my $ANSWER = 8 * 1024 * 1024;           # the answer budget
my $RSS = 160 * 1024;                   # KiB a worker may reach

my $t = AgentTest->new;
$t->mock(sub { return { text => 'fine' } });

my $conf = $t->conf(http => <<'HTTP');
agent_max_document_size 256k;
agent_store_quota items=30 size=4m;
client_max_body_size 16m;
agent_owner $http_x_user;
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; }
    $1};
$t->run($conf);

my %ann = ('X-User' => 'ann');
my %bob = ('X-User' => 'bob');
sub lg { my ($m, $p, $b, %h) = @_; return $t->http($m, "/lg$p", $b, %h) }
sub blob { my ($n) = @_; return 'x' x $n }

# 1. an assistant: each PATCH merges its metadata; past the cap, a 422
my $r = lg('POST', '/assistants', { graph_id => 'react',
    metadata => { a => blob(100_000) } }, %ann);
is($r->{status}, 200, 'an assistant of 100 KB made');
my $aid = $r->{json}{assistant_id};

$r = lg('PATCH', "/assistants/$aid", { metadata => { b => blob(100_000) } },
        %ann);
is($r->{status}, 200, 'a PATCH within the cap after the merge');

$r = lg('PATCH', "/assistants/$aid", { metadata => { c => blob(100_000) } },
        %ann);
is($r->{status}, 422, 'a PATCH past the cap after the merge: 422');
like($r->{content}, qr/agent_max_document_size/, 'which says why');

$r = lg('GET', "/assistants/$aid", undef, %ann);
is($r->{json}{version}, 2, 'the refused PATCH made no version');
ok(!exists $r->{json}{metadata}{c}, 'nor changed the metadata');

is(lg('POST', '/assistants', { graph_id => 'react',
      config => { configurable => { x => blob($CAP) } } }, %ann)->{status},
   422, 'an assistant made over the cap: 422');

# the versions kept are bounded: many small PATCHes keep the last ones
my $small = lg('POST', '/assistants', { graph_id => 'react' }, %ann)
    ->{json}{assistant_id};
lg('PATCH', "/assistants/$small", { metadata => { n => $_ } }, %ann)
    for 1 .. 60;
$r = lg('POST', "/assistants/$small/versions", { limit => 1000 }, %ann);
is($r->{status}, 200, 'versions listed');
is(scalar @{ $r->{json} }, 50, 'the last 50 versions are kept');
is($r->{json}[0]{version}, 61, 'the latest first');
is(lg('GET', "/assistants/$small", undef, %ann)->{json}{metadata}{n}, 60,
   'the latest holds the last PATCH');

# 3. a thread: PATCH, create and copy are capped after the merge
$r = lg('POST', '/threads', { metadata => { a => blob(200_000) } }, %ann);
is($r->{status}, 200, 'a thread of 200 KB made');
my $tid = $r->{json}{thread_id};
$r = lg('PATCH', "/threads/$tid", { metadata => { b => blob(100_000) } },
        %ann);
is($r->{status}, 422, 'a thread PATCH past the cap: 422');
like($r->{content}, qr/agent_max_document_size/, 'which says why');
is(lg('POST', '/threads', { metadata => { a => blob($CAP) } }, %ann)
       ->{status}, 422, 'a thread made over the cap: 422');
$r = lg('GET', "/threads/$tid", undef, %ann);
ok(!exists $r->{json}{metadata}{b}, 'the refused PATCH changed nothing');

# a run's kwargs (its input) over the cap
is(lg('POST', "/threads/$tid/runs/wait", { assistant_id => 'react',
      input => { messages => [ { role => 'user',
                                 content => blob($CAP + 10) } ] } },
      %ann)->{status}, 422, 'a run whose input is over the cap: 422');

# 2. the store: a value over the cap; the owner's quota
is(lg('PUT', '/store/items', { namespace => ['n'], key => 'big',
      value => { v => blob($CAP) } }, %ann)->{status}, 422,
   'a store value over the cap: 422');

my $ok = 0;
for my $i (1 .. 20) {
    $r = lg('PUT', '/store/items', { namespace => ['n'], key => "k$i",
            value => { v => blob(200_000) } }, %ann);
    last if $r->{status} != 204 && $r->{status} != 200;
    $ok++;
}
is($ok, 20, '20 items of 200 KB stored (4 MB of quota)');
$r = lg('PUT', '/store/items', { namespace => ['n'], key => 'k21',
        value => { v => blob(200_000) } }, %ann);
is($r->{status}, 422, 'the next one is over the owner\'s quota: 422');
like($r->{content}, qr/agent_store_quota/, 'which says why');
$r = lg('PUT', '/store/items', { namespace => ['n'], key => 'k1',
        value => { v => blob(100_000) } }, %ann);
ok($r->{status} == 204 || $r->{status} == 200,
   'a replaced item counts once: it goes in');
$r = lg('PUT', '/store/items', { namespace => ['n'], key => 'k21',
        value => { v => 1 } }, %bob);
ok($r->{status} == 204 || $r->{status} == 200,
   'another owner has a quota of its own');

# the lists stop at the answer budget
for my $i (1 .. 45) {
    lg('POST', '/threads', { metadata => { i => $i, p => blob(250_000) } },
       %bob);
}
$r = lg('POST', '/threads/search', { limit => 1000 }, %bob);
is($r->{status}, 200, 'threads/search of 45 threads of 250 KB');
ok(length $r->{content} <= $ANSWER, 'within the answer budget ('
   . length($r->{content}) . ')');
ok(@{ $r->{json} } >= 20 && @{ $r->{json} } < 45, 'with what fits ('
   . scalar(@{ $r->{json} }) . ')');

for my $i (1 .. 45) {
    lg('POST', '/assistants', { graph_id => 'react',
       metadata => { i => $i, p => blob(250_000) } }, %bob);
}
$r = lg('POST', '/assistants/search', { limit => 1000 }, %bob);
is($r->{status}, 200, 'assistants/search of 45 assistants of 250 KB');
ok(length $r->{content} <= $ANSWER, 'within the answer budget ('
   . length($r->{content}) . ')');

for my $i (1 .. 40) {
    lg('PUT', '/store/items', { namespace => ['m'], key => "k$i",
       value => { v => blob(250_000) } }, ('X-User' => 'cid'));
}
$r = lg('POST', '/store/items/search', { namespace_prefix => ['m'],
        limit => 1000 }, ('X-User' => 'cid'));
is($r->{status}, 200, 'store search of 40 items of 250 KB, limit=1000');
ok(length $r->{content} <= $ANSWER, 'within the answer budget ('
   . length($r->{content}) . ')');

# our API and the other protocols take the same road
$r = $t->http('POST', '/api/sessions/', { title => 't',
              metadata => { a => blob($CAP) } }, %ann);
is($r->{status}, 422, 'our API: a session\'s metadata over the cap: 422');

for my $pid ($t->worker_pids) {
    open my $fh, '<', "/proc/$pid/status" or next;
    my ($rss) = join('', <$fh>) =~ /VmRSS:\s+(\d+)/;
    SKIP: {
        # make test-asan: freed memory waits in ASan's quarantine (256 MB)
        skip "the allocator is ASan's: $rss KiB", 1
            if $ENV{AGENT_SANITIZER_LOGS};
        ok(defined $rss && $rss < $RSS, "worker $pid: $rss KiB");
    }
}

$t->check_log;
done_testing;
