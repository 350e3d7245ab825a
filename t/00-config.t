#!/usr/bin/perl
# Configuration: a good one passes "nginx -t"; each bad one fails it with a
# message that names the directive, the file and the line.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
my $conf = $t->conf;

$t->write_conf($conf);
my ($ok, $out) = $t->test_conf;
ok($ok, 'the test config passes nginx -t') or diag($out);

sub bad {
    my ($name, $edit, $re) = @_;
    my $c = $conf;
    $edit->() for $c;
    $t->write_conf($c);
    my ($ok, $out) = $t->test_conf;
    ok(!$ok, "$name: nginx -t fails");
    like($out, $re, "$name: the message says why");
    like($out, qr{in \S+/nginx\.conf:\d+}, "$name: file and line");
}

bad('unknown provider', sub { s/provider=openai/provider=acme/ },
    qr/unknown or missing provider "acme"/);
bad('url missing', sub { s{url=\S+}{} }, qr/agent_model.*url=/);
bad('rounds not a number', sub {
        s/(agent_chat;)/$1 agent_max_tool_rounds lots;/ },
    qr/"agent_max_tool_rounds" directive invalid number/);
bad('rounds zero', sub {
        s/(agent_chat;)/$1 agent_max_tool_rounds 0;/ },
    qr/"agent_max_tool_rounds" directive must be a number from 1 to 1000/);
bad('unknown database', sub {
        s/(agent_chat;)/$1 agent_use_database nope;/ },
    qr/agent_use_database: unknown database "nope"/);
bad('missing prompt folder', sub {
        s{(agent_resources_dir)}{agent_prompts %%DIR%%/nowhere;\n    $1} },
    qr/agent_prompts: cannot open the prompt template .*react_system\.md/);
bad('missing database file', sub {
        s{(agent_resources_dir)}{agent_database shop %%DIR%%/none.db;\n    $1} },
    qr/agent_database "shop": cannot read/);
bad('chat without a model', sub { s/agent_model [^\n]*\n// },
    qr/agent_chat.*needs at least one agent_model/);
bad('duplicate model', sub {
        s/(agent_model [^\n]*\n)/$1$1/ }, qr/duplicate model name/);

# a prompt folder with the template is used
mkdir $t->dir . '/prompts';
open my $fh, '>', $t->dir . '/prompts/react_system.md' or die;
print $fh "Custom prompt. Files: {{csv_metadata}} DB: {{db_schema}}\n";
close $fh;

my $mock = $t->mock(sub { { text => 'fine' } });
my $c = $t->conf(http => 'agent_prompts prompts;');
$t->run($c);
my $sid = $t->session;
my $r = $t->turn($sid, 'hi');
is($r->{types}[-1], 'end', 'turn with a custom prompt');
my ($req) = $mock->requests;
like($req->{body}{messages}[0]{content},
     qr/^Custom prompt\. Files: \(none uploaded\) DB: \(none\)/,
     'the template, relative to the prefix, rendered');

$t->stop;
$t->check_log;
done_testing;
