#!/usr/bin/perl
# API keys: key_env names a variable made visible with "env"; the key goes to
# the provider as a bearer token and never into the log; a model without
# its key says so.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
my $mock = $t->mock(sub { { text => 'keyed answer' } });

my $conf = $t->conf(http => 'agent_model nokey provider=openai '
    . 'url=http://127.0.0.1:%%MOCK%%/v1/chat/completions '
    . 'key_env=AGENT_TEST_MISSING_KEY;');
$conf =~ s/(agent_model mock [^;]*)/$1 key_env=AGENT_TEST_KEY/;
$conf =~ s/^(worker_processes)/env AGENT_TEST_KEY=sk-test-secret-42;\n$1/m;
$t->run($conf);

my $sid = $t->session;
my $r = $t->http('GET', "/api/chat/$sid/model");
is_deeply($r->{json}{models}, { mock => JSON::PP::true,
                                nokey => JSON::PP::false },
          'models: which have a key');

$r = $t->turn($sid, 'hello');
is($r->{types}[-1], 'end', 'a turn with the key');
my ($req) = $mock->requests;
is($req->{auth}, 'Bearer sk-test-secret-42', 'the key as a bearer token');

$r = $t->http('POST', "/api/chat/$sid/message",
              { message => 'hi', model => 'nokey' });
is($r->{status}, 503, 'a model without its key: 503');
like($r->{json}{error}, qr/AGENT_TEST_MISSING_KEY.*env AGENT_TEST_MISSING_KEY/,
     'says what to set');

$t->stop;
unlike($t->slurp('error.log'), qr/sk-test-secret-42/, 'no key in the log');
$t->check_log;
done_testing;
