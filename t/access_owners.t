#!/usr/bin/perl
# Session owners: with agent_owner, a session belongs to the owner value of
# the request that created it; another owner gets 404 on every endpoint,
# exactly as for an unknown session; listing is filtered; an empty owner
# gets 401.  Over both workers (a new connection per request).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
$t->mock(sub { { text => 'hello' } });
my $db = $t->dir . '/shop.db';
system('sqlite3', $db, 'CREATE TABLE items (name TEXT);') == 0 or die;
$t->run($t->conf(http => "agent_owner \$http_x_user_id; "
                         . "agent_database shop $db;"));

sub as {
    my ($user, $method, $path, $body, %h) = @_;
    $h{'X-User-Id'} = $user if defined $user;
    return $t->http($method, $path, $body, %h);
}

# no owner: 401 everywhere
for my $req ([ 'GET', '/api/sessions/' ], [ 'POST', '/api/sessions/' ]) {
    my $r = as(undef, @$req);
    is($r->{status}, 401, "no owner: $req->[0] $req->[1] is 401");
    like($r->{json}{error} // '', qr/owner/, 'says why');
}

my $a1 = as('alice', 'POST', '/api/sessions/', { title => 'a1' })->{json}{id};
my $a2 = as('alice', 'POST', '/api/sessions/', { title => 'a2' })->{json}{id};
my $b1 = as('bob', 'POST', '/api/sessions/', { title => 'b1' })->{json}{id};
ok($a1 && $a2 && $b1, 'sessions created by alice and bob');

is(as('alice', 'POST', "/api/sessions/$a1/resources?name=x.csv", "a,b\n1,2\n",
      'Content-Type' => 'text/csv')->{status}, 201, 'alice uploads');
my $r = $t->turn($a1, 'hi');   # no header: the turn endpoint needs one
ok(!defined $r->{status} || $r->{status} == 401, 'a turn without owner: 401');

# listings, several times so that both workers answer
for my $i (1 .. 4) {
    my @a = map { $_->{id} }
            @{ as('alice', 'GET', '/api/sessions/')->{json}{sessions} };
    my @b = map { $_->{id} }
            @{ as('bob', 'GET', '/api/sessions/')->{json}{sessions} };
    is_deeply([ sort @a ], [ sort $a1, $a2 ], "alice lists hers ($i)");
    is_deeply(\@b, [ $b1 ], "bob lists his ($i)");
}

# every endpoint with alice's session id answers bob 404, as unknown
my $unknown = '00000000-0000-4000-8000-000000000000';
my @endpoints = (
    [ 'GET', '/api/sessions/%s' ],
    [ 'GET', '/api/sessions/%s/messages' ],
    [ 'GET', '/api/sessions/%s/state' ],
    [ 'GET', '/api/sessions/%s/history' ],
    [ 'GET', '/api/sessions/%s/resources' ],
    [ 'POST', '/api/sessions/%s/resources?name=y.csv', "c\n1\n" ],
    [ 'DELETE', '/api/sessions/%s' ],
    [ 'POST', '/api/chat/%s/message', { message => 'steal' } ],
    [ 'GET', '/api/chat/%s/model' ],
    [ 'POST', '/api/chat/%s/model', { name => 'mock' } ],
    [ 'POST', '/api/chat/%s/connection', { database => 'shop' } ],
);

for my $e (@endpoints) {
    my ($m, $p, $body) = @$e;
    my %h = ref $body || !defined $body ? () : ('Content-Type' => 'text/csv');
    for my $i (1 .. 2) {
        my $theirs = as('bob', $m, sprintf($p, $a1), $body, %h);
        my $none = as('bob', $m, sprintf($p, $unknown), $body, %h);
        is($theirs->{status}, 404, "bob: $m " . sprintf($p, 'A') . " ($i)");
        (my $said = $theirs->{json}{error} // '') =~ s/\Q$a1\E/ID/g;
        (my $want = $none->{json}{error} // '') =~ s/\Q$unknown\E/ID/g;
        is($said, $want, 'the same answer as for an unknown session');
    }
}

# alice still has everything: nothing of bob's requests took effect
$r = as('alice', 'GET', "/api/sessions/$a1");
is($r->{status}, 200, 'alice reads her session');
is($r->{json}{message_count}, 0, 'bob\'s message did not land');
$r = as('alice', 'GET', "/api/sessions/$a1/resources");
is(scalar @{ $r->{json}{resources} }, 1, 'bob\'s upload did not land');
is(as('alice', 'GET', "/api/chat/$a1/model")->{status}, 200,
   'alice reads her model');
is(as('alice', 'DELETE', "/api/sessions/$a2")->{status}, 204,
   'alice deletes her own');
is(as('bob', 'GET', "/api/sessions/$b1")->{status}, 200, 'bob reads his');

$t->stop;
$t->check_log;
done_testing;
