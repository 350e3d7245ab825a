#!/usr/bin/perl
# Production: the master reads the config as root, the workers run as
# www-data; every file and folder the module creates must work for them.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

plan skip_all => 'needs root to switch users' if $> != 0;
plan skip_all => 'no www-data user' unless getpwnam('www-data');

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    return { tools => [[ 'c', 'execute_sql_query',
                         '{"query":"SELECT SUM(n) FROM csv_data"}' ]] }
        if $req->{messages}[-1]{role} eq 'user';
    my ($res) = grep { $_->{role} eq 'tool' } @{ $req->{messages} };
    return { text => "sum: $res->{content}" };
});

my $conf = $t->conf(user => 'user www-data www-data;');
$conf =~ s{agent_checkpoint_db %%DIR%%/agent.db}
          {agent_checkpoint_db %%DIR%%/data/agent.db};
$conf =~ s{agent_resources_dir %%DIR%%/resources}
          {agent_resources_dir %%DIR%%/data/resources};
$t->run($conf);

my @w = $t->worker_pids;
my ($uid) = (`ps -o uid= -p $w[0]` =~ /(\d+)/);
is($uid, scalar getpwnam('www-data'), 'workers run as www-data');

my $sid = $t->session;
my $r = $t->http('POST', "/api/sessions/$sid/resources?name=n.csv",
                 "n\n1\n2\n3\n", 'Content-Type' => 'text/csv');
is($r->{status}, 201, 'upload works');

$r = $t->turn($sid, 'sum?');
is($r->{types}[-1], 'end', 'a whole turn works');
like($r->{events}[-1]{full_response}, qr/\[\[6\]\]/, 'with SQL on the CSV');

my $dir = $t->dir . '/data';
my $www = getpwnam('www-data');
is((stat $dir)[4], $www, 'the data folder belongs to the workers');
SKIP: {
    skip 'make test-pg: PostgreSQL holds the checkpoints', 1 if $ENV{AGENT_PG};
    is((stat "$dir/agent.db")[4], $www, 'the checkpoint db too');
}
is((stat "$dir/resources")[4], $www, 'the resources folder too');
my ($f) = glob("$dir/resources/*.sqlite");
is((stat $f)[4], $www, 'and the uploaded CSV file');

# the master restarts and reconfigures as root: still usable
$t->stop;
$t->run($conf);
$r = $t->turn($sid, 'again?');
is($r->{types}[-1], 'end', 'after a restart too');

$t->stop;
$t->check_log;
done_testing;
