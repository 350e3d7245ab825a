#!/usr/bin/perl
# What a location may reach is what its configuration names: POST
# /{id}/connection takes only the location's own database (agent_use_
# database) or those of agent_databases; a model outside agent_models is
# unknown to the location (GET /model lists only the allowed ones, POST
# /model and a message's "model" refuse it); a forbidden name is answered
# with the words of an unknown one; nginx -t refuses undeclared names.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
$t->mock(sub { { text => 'ok' } });

for my $name (qw(one two)) {
    system('sqlite3', $t->dir . "/$name.db",
           "CREATE TABLE $name (a INTEGER); INSERT INTO $name VALUES (1);")
        == 0 or die 'sqlite3 failed';
}

my $http = "agent_database one %%DIR%%/one.db;\n"
    . "agent_database two %%DIR%%/two.db;\n"
    . "agent_model other provider=openai "
    . "url=http://127.0.0.1:%%MOCK%%/v1/chat/completions model=other-1;\n"
    . "agent_model third provider=openai "
    . "url=http://127.0.0.1:%%MOCK%%/v1/chat/completions model=third-1 "
    . "alias=tertius;\n";
my $conf = $t->conf(http => $http,
                    location => 'agent_use_database one;');
$conf =~ s{(location /api/chat/ \{)}
          {location /both/ { agent_chat; agent_databases one two;
                             agent_models other tertius; }
        location /none/ { agent_chat; }
        $1};
$t->run($conf);

my $sid = $t->session;

# databases
my $r = $t->http('POST', "/api/chat/$sid/connection", { database => 'one' });
is($r->{status}, 200, 'the location\'s own database');
$r = $t->http('POST', "/api/chat/$sid/connection", { database => 'two' });
is($r->{status}, 404, 'another database of the http block: 404');
is($r->{json}{error}, 'there is no database "two"',
   'with the words of an unknown name');
ok($r->{content} !~ /sample|rows/, 'and no sample rows');
$r = $t->http('POST', "/api/chat/$sid/connection", { database => 'nine' });
is($r->{status}, 404, 'an unknown one: the same status');
is($r->{json}{error}, 'there is no database "nine"',
   'an unknown one: the same words');
is($t->http('POST', "/none/$sid/connection", { database => 'one' })->{status},
   404, 'a location without agent_use_database: none');
$r = $t->http('POST', "/both/$sid/connection", { database => 'two' });
is($r->{status}, 200, 'agent_databases one two: two');
is($r->{json}{tables}[0]{name}, 'two', 'its tables');

# models
$r = $t->http('GET', "/both/$sid/model");
is_deeply([ sort keys %{ $r->{json}{models} } ], [qw(other third)],
          'GET /model lists only agent_models');
is($r->{json}{model}, 'other', 'the default: the first allowed');
$r = $t->http('POST', "/both/$sid/model", { name => 'mock' });
is($r->{status}, 404, 'POST /model with a model not allowed: 404');
is($r->{json}{error}, 'there is no model "mock"', 'as an unknown model');
$r = $t->http('POST', "/both/$sid/model", { name => 'gpt-9' });
is($r->{status}, 404, 'POST /model with an unknown one: the same status');
is($r->{json}{error}, 'there is no model "gpt-9"', 'and words');
$r = $t->http('POST', "/both/$sid/model", { name => 'tertius' });
is($r->{json}{model}, 'third', 'an allowed one by its alias');
$r = $t->stream("/both/$sid/message",
                encode_json({ message => 'hi', model => 'mock' }));
is($r->{status}, 400, 'a message naming a model not allowed: refused');
is($r->{json}{error}, 'there is no model "mock"', 'as an unknown model');
$r = $t->stream("/both/$sid/message",
                encode_json({ message => 'hi', model => 'gpt-9' }));
is($r->{status}, 400, 'a message naming an unknown model: the same status');
is($r->{json}{error}, 'there is no model "gpt-9"', 'and words');
is($t->stream("/both/$sid/message",
              encode_json({ message => 'hi' }))->{types}[-1], 'end',
   'a message with the session\'s allowed model');

# a message refused after its session's lease was taken (the model is
# checked against the session's) is answered once the lease is let go:
# the next message, at once and on any worker, finds the session free.
# On PostgreSQL the unlock is made slow (a trigger that sleeps), so that
# an answer sent before it is seen each time.
{
    $t->slow_unlock(0.2);
    my @got;
    for (1 .. 4) {
        my $r = $t->stream("/both/$sid/message",
                           encode_json({ message => 'hi', model => 'mock' }));
        push @got, $r->{status};
        $r = $t->stream("/both/$sid/message",
                        encode_json({ message => 'hi' }));
        push @got, $r->{types}[-1] // $r->{status};
    }
    is("@got", '400 end 400 end 400 end 400 end',
       'a refused message lets the lease go before it is answered');
    $t->slow_unlock(0);
}

# the session's model set elsewhere is not used where it is not allowed
is($t->http('POST', "/api/chat/$sid/model", { name => 'mock' })->{status},
   200, 'the model set through a location that allows every model');
$r = $t->http('GET', "/both/$sid/model");
is($r->{json}{model}, 'other', 'elsewhere: the location\'s first allowed');
my $before = scalar $t->{mock}->requests;
is($t->stream("/both/$sid/message",
              encode_json({ message => 'hi' }))->{types}[-1], 'end',
   'a turn there');
is(($t->{mock}->requests)[$before]{body}{model}, 'other-1',
   'runs on an allowed model');
is_deeply([ sort keys %{ $t->http('GET', "/api/chat/$sid/model")
                            ->{json}{models} } ],
          [qw(mock other third)], 'without agent_models: every model');
unlike($t->slurp('error.log'), qr/client gone/,
       'a refused message is not logged as a client gone');

$t->stop;

# nginx -t
for my $case ([ 'agent_databases one three;',
                qr/agent_databases: unknown database "three"/ ],
              [ 'agent_models other gpt-9;',
                qr/agent_models: unknown model "gpt-9"/ ]) {
    my $c = $t->conf(http => $http, location => $case->[0]);
    $t->write_conf($c);
    my ($ok, $out) = $t->test_conf;
    ok(!$ok, "nginx -t refuses $case->[0]");
    like($out, $case->[1], 'naming the unknown name');
}

$t->check_log;
done_testing;
