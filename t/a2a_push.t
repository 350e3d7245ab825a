#!/usr/bin/perl
# A2A push notifications (issue 31, item 2): a message's push config
# (A2A 1.0's taskPushNotificationConfig, 0.3's pushNotificationConfig),
# sent by A2A's own JavaScript SDK over both bindings, is checked against
# agent_webhooks at once and kept with the task; at the task's end the
# task goes to its URL once (tried again through a 500), as its revision
# writes it (1.0: {"task": ...}; 0.3: the Task), with its token or its
# Authorization, signed under key_env as Standard Webhooks (issue 48,
# item 7: webhook-id the task's, checked by the npm verifier); the config
# is read back without its token and credentials; a location without
# agent_webhooks refuses it; a task whose worker is killed is finished by
# another, which sends it too, with the same webhook-id and its token.
# The token and credentials are kept where no API reads them (issue 48,
# item 5): not in the run's kwargs, which the LangGraph API's GET
# /threads/{id}/runs shows, but in the run's secret column, emptied at
# the task's end.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use POSIX ();
use Digest::SHA qw(hmac_sha256);
use MIME::Base64 qw(encode_base64);

my $root = "$FindBin::Bin/..";
my $sdk = AgentTest::npm('a2a', '@a2a-js/sdk', '@a2a-js/sdk@1.3.0');
my $sw = AgentTest::npm_install('standardwebhooks', 'standardwebhooks',
                                'standardwebhooks@1.3.0');

my $t = AgentTest->new;
my $dir = $t->dir;

# the model: "slow" hangs the first time (a worker to kill), else answers
$t->mock(sub {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    if ($q eq 'slow' && !-e "$dir/cut") {
        open my $fh, '>', "$dir/cut" or die;
        close $fh;
        return { text => 'never ' x 60, pieces => [ ('never ') x 60 ],
                 delay => 0.5 };
    }
    return { text => "you said $q" };
});

# the receiver: a path's first request answered 500, the next ones 200
my $log = "$dir/push.log";
my $port = AgentTest::hook_receiver($log);

sub pushes {
    my ($path) = @_;
    return map { { %$_, token => $_->{headers}{'x-a2a-notification-token'},
                   auth => $_->{headers}{authorization},
                   id => $_->{headers}{'webhook-id'},
                   sig => $_->{headers}{'webhook-signature'} } }
           grep { $_->{path} eq $path } AgentTest::hooks_got($log);
}

my $key = 'push-secret';
$ENV{AGENT_TEST_PUSH_KEY} = $key;
my $conf = $t->conf;
$conf =~ s/^(worker_processes)/env AGENT_TEST_PUSH_KEY;\n$1/m;
$conf =~ s{(location /api/chat/)}{location /a2a/ { agent_a2a;
            agent_owner \$http_x_user; agent_turn_lease 3s;
            agent_webhooks http://127.0.0.1:$port/push/
                           key_env=AGENT_TEST_PUSH_KEY; }
        location /plain/ { agent_a2a; agent_owner \$http_x_user; }
        location /lg/ { agent_langgraph_api; }
        $1};
$t->run($conf);

my $base = 'http://127.0.0.1:' . $t->port;
my $hook = "http://127.0.0.1:$port/push";
my %o = AgentTest::observe("$root/t/a2a/push.mjs", $sdk, $base, $hook);

is($o{card}{pushNotifications}, JSON::PP::true,
   'the card: push notifications, with agent_webhooks');

# A2A 1.0
my $task = $o{v1_send}{result};
is($task->{status}{state}, 'TASK_STATE_COMPLETED', '1.0: the task ends')
    or diag explain $o{v1_send};
ok(AgentTest::wait_for(sub { pushes('/push/v1') >= 2 }, 15),
   '1.0: its push sent, and sent again after a 500');
my @p = pushes('/push/v1');
is(scalar @p, 2, '1.0: twice, no more');
is($p[0]{body}, $p[1]{body}, '... the same body');
my $b = decode_json($p[-1]{body});
is($b->{task}{id}, $task->{id}, '1.0: a StreamResponse of the task');
is($b->{task}{status}{state}, 'TASK_STATE_COMPLETED', '... completed');
like(encode_json($b->{task}{artifacts}), qr/you said hi/,
     '... with the answer');
is($p[-1]{token}, 'tok-1', '... its token in X-A2A-Notification-Token');
is($p[-1]{id}, $task->{id}, '... its webhook-id: the task\'s');
is($p[0]{id}, $p[-1]{id}, '... the same on each try');
is($p[-1]{sig}, 'v1,' . encode_base64(hmac_sha256("$p[-1]{id}."
   . "$p[-1]{headers}{'webhook-timestamp'}.$p[-1]{body}", $key), ''),
   '... signed under key_env as Standard Webhooks');
SKIP: {
    skip 'npm is missing: Standard Webhooks\' verifier not installed', 1
        unless $sw;
    my %v = AgentTest::observe("$root/t/webhooks/verify.mjs", $sw, $key,
                               'raw', $log, '/push/v1');
    ok(@{ $v{verified} // [] } == 2 && !grep({ !$_->{ok} } @{ $v{verified} }),
       '... which standardwebhooks verifies') or diag explain \%v;
}
is($o{v1_get}{result}{url}, "$hook/v1", 'GetTaskPushNotificationConfig')
    or diag explain $o{v1_get};
is($o{v1_get}{result}{id}, 'cfg-1', '... its id');
ok(!exists $o{v1_get}{result}{token}, '... without its token');
is($o{v1_get}{result}{taskId}, $task->{id}, '... its task');
is(scalar @{ $o{v1_list}{result}{configs} // [] }, 1,
   'ListTaskPushNotificationConfigs: the one')
    or diag explain $o{v1_list};
like($o{v1_refused}{error} // '', qr/agent_webhooks/,
     'a URL agent_webhooks does not allow: refused at once');

# A2A 0.3, through the SDK's legacy binding
my $t03 = $o{v03_send}{result};
is($t03->{status}{state}, 'TASK_STATE_COMPLETED', '0.3: the task ends')
    or diag explain $o{v03_send};
ok(AgentTest::wait_for(sub { pushes('/push/legacy') >= 2 }, 15),
   '0.3: its push sent');
my ($l) = (pushes('/push/legacy'))[-1];
my $lb = decode_json($l->{body} // '{}');
is($lb->{kind}, 'task', '0.3: the Task itself');
is($lb->{status}{state}, 'completed', '... in 0.3\'s words');
is($l->{auth}, 'Bearer cred-1', '... its Authorization');
ok(!defined $o{v03_get}{result}{pushNotificationConfig}{authentication}
       {credentials},
   'read back without its credentials') or diag explain $o{v03_get};

# the token and credentials: in no API, and gone from the store at the end
my $db = "$dir/agent.db";
for my $c ([ 'v1', $task->{contextId}, 'tok-1' ],
           [ '0.3', $t03->{contextId}, 'cred-1' ]) {
    my ($v, $ctx, $secret) = @$c;
    my $g = $t->http('GET', "/lg/threads/$ctx/runs");
    is($g->{status}, 200, "$v: GET /threads/{id}/runs, no agent_owner");
    like($g->{content}, qr{/push/}, '... shows the run and its push URL');
    unlike($g->{content}, qr/\Q$secret\E/, "... not its $secret");
}
is($t->sqlite($db, "SELECT count(*) FROM runs WHERE secret IS NOT NULL"),
   '0', 'the ended tasks\' secrets are gone from the store');
is($t->sqlite($db, "SELECT count(*) FROM runs WHERE kwargs LIKE '%tok-%'"
              . " OR kwargs LIKE '%cred-%'"), '0', '... and never in kwargs');

# by hand: no agent_webhooks, a header's injection
sub rpc {
    my ($path, $body) = @_;
    return $t->http('POST', $path, encode_json($body), 'Content-Type' =>
                    'application/json', 'X-User' => 'alice');
}
my $msg = { role => 'ROLE_USER', messageId => 'm1',
            parts => [ { text => 'hi' } ] };
my $r = rpc('/plain/', { jsonrpc => '2.0', id => 1, method => 'SendMessage',
    params => { message => $msg, configuration => {
        taskPushNotificationConfig => { url => "$hook/x" } } } });
is($r->{json}{error}{code}, -32003, 'no agent_webhooks: not supported');
$r = rpc('/a2a/', { jsonrpc => '2.0', id => 2, method => 'SendMessage',
    params => { message => $msg, configuration => {
        taskPushNotificationConfig => { url => "$hook/x",
                                        token => "a\r\nX-Evil: 1" } } } });
is($r->{json}{error}{code}, -32602, 'a token that would split a header');
$r = rpc('/a2a/', { jsonrpc => '2.0', id => 3,
    method => 'CreateTaskPushNotificationConfig',
    params => { taskId => $task->{id}, url => "$hook/x" } });
is($r->{json}{error}{code}, -32004, 'a config made alone: unsupported');
$r = $t->http('POST', '/a2a/', encode_json({ jsonrpc => '2.0', id => 4,
    method => 'GetTaskPushNotificationConfig',
    params => { taskId => $task->{id}, id => 'cfg-1' } }),
    'Content-Type' => 'application/json', 'X-User' => 'bob');
is($r->{json}{error}{code}, -32001, 'another owner\'s task: not found');

# a task whose worker is killed: another finishes it, and sends its push
my $spid = fork() // die;
if ($spid == 0) {
    rpc('/a2a/', { jsonrpc => '2.0', id => 5, method => 'SendMessage',
        params => { message => { %$msg, messageId => 'm5', contextId =>
                                 'ctx-push', parts => [ { text => 'slow' } ] },
                    configuration => { taskPushNotificationConfig => {
                        url => "$hook/taken", token => 'tok-t' } } } });
    POSIX::_exit(0);
}
ok(AgentTest::wait_for(sub { -e "$dir/cut" }, 20), 'a slow task runs');
is($t->sqlite($db, "SELECT secret FROM runs WHERE thread_id = 'ctx-push'"),
   'X-A2A-Notification-Token: tok-t', 'its secret kept while it runs');
my $holder = $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = "
                        . "'ctx-push'");
like($holder, qr/^\d+$/, 'a worker holds its context');
kill 'KILL', $holder if $holder =~ /^\d+$/;
waitpid($spid, 0);
ok(AgentTest::wait_for(sub { pushes('/push/taken') >= 2 }, 30),
   'its push sent by the worker that took it over');
my ($tk) = (pushes('/push/taken'))[-1];
my $tb = decode_json($tk->{body} // '{}');
is($tb->{task}{status}{state}, 'TASK_STATE_COMPLETED', '... completed');
is($tk->{token}, 'tok-t', '... with its token');
is($tk->{id}, (pushes('/push/taken'))[0]{id}, '... the same webhook-id');
like($tk->{id} // '', qr/\S/, '... the task\'s');
ok(AgentTest::wait_for(sub { $t->sqlite($db, "SELECT count(*) FROM runs"
       . " WHERE secret IS NOT NULL") eq '0' }, 10),
   'its secret gone from the store at its end');

$t->stop;
$t->check_log(allow => qr/exited on signal 9/);
done_testing;
