#!/usr/bin/perl
# Budgets in dollars: agent_model price= (cached input and cache writes at
# their own prices: OpenAI's, Anthropic's, Gemini's), $agent_cost in an access
# log, agent_cost_usd_total by model, gen_ai.usage.cost on the chat span;
# agent_limit cost= refusing a model call (budget_exceeded) and then a
# turn (429) with words that name it; 64 turns at once against a $0.01
# budget spend at most one call's reservation past it.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use JSON::PP;
use POSIX qw(WNOHANG);

my $t = AgentTest->new;
my $dir = $t->dir;

# what each call reports: the costs below are figured from these
$t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];
    my ($u) = grep { $_->{role} eq 'user' } reverse @{ $req->{messages} };
    my $q = $u->{content} // '';
    return { text => 'cached', usage => { prompt => 1000, completion => 100,
                                          cached => 800 } }
        if $q eq 'cached';
    return { text => 'tiny', usage => { prompt => 10, completion => 5 } }
        if $q eq 'tiny';
    if ($q =~ /^tool/) {
        return { text => 'done', usage => { prompt => 100, completion => 50 } }
            if $last->{role} eq 'tool';
        return { tools => [ [ 'q1', 'execute_sql_query',
                              '{"query": "SELECT 1"}' ] ],
                 usage => { prompt => 100, completion => 50 } };
    }
    return { text => 'Hello', usage => { prompt => 1000, completion => 200 } };
});

my $claude = MockLLM->new(dir => $dir, name => 'claude', format => 'anthropic',
    script => sub {
        return { text => 'Hi', usage => { prompt => 2000, completion => 100,
                                          cached => 1000,
                                          cache_write => 500 } };
    });
my $gemini = MockLLM->new(dir => $dir, name => 'gemini', format => 'gemini',
    script => sub {
        return { text => 'Hi', usage => { prompt => 1000, completion => 100,
                                          cached => 600 } };
    });
END { $_->stop for grep { $_ } $claude, $gemini }

my $hooks = "$dir/otlp.log";
my $otlp = AgentTest::hook_receiver($hooks);
my ($cport, $gport) = ($claude->port, $gemini->port);
my $url = 'url=http://127.0.0.1:%%MOCK%%/v1/chat/completions model=mock-1';

my $conf = $t->conf(http => <<"HTTP",
agent_model plain provider=openai $url;
agent_model mini provider=openai $url price=0.15/0.60;
agent_model claude provider=anthropic url=http://127.0.0.1:$cport
            model=claude-x price=3/15/0.30/3.75;
agent_model gem provider=gemini url=http://127.0.0.1:$gport model=gem-x
            price=1.25/10/0.3125;
agent_model budgeted provider=openai $url price=2.50/10.00 max_tokens=100;
agent_otlp url=http://127.0.0.1:$otlp/v1/traces;
agent_limit_zone money key=\$http_x_user size=1m;
log_format cost '\$agent_session|\$agent_model|\$agent_cost';
HTTP
    location => 'access_log %%DIR%%/cost.log cost; '
                . 'add_header X-Trace-Id $agent_trace_id;');
$conf =~ s{agent_model mock [^;]*;}
          {agent_model gpt provider=openai $url alias=default
                       price=2.50/10.00/1.25;};
$conf =~ s{(location /api/sessions/)}{location = /metrics { agent_metrics; }
        location /money/ { agent_chat;
            agent_limit zone=money cost=0.01/1h; }
        location /tight/ { agent_chat;
            agent_limit zone=money cost=0.0005/1h; }
        $1};
$t->run($conf);

sub turn_as {
    my ($user, $path, $text, $model, %o) = @_;
    my $sid = $t->session;
    my $r = $t->stream("$path$sid/message",
                       encode_json({ message => $text, model => $model }),
                       headers => { 'X-User' => $user }, %o);
    $r->{sid} = $sid;
    return $r;
}

sub metric {
    my ($model) = @_;
    my $m = $t->http('GET', '/metrics')->{content};
    return $m =~ /^agent_cost_usd_total\{model="$model"\} (\S+)$/m ? $1
                                                                   : undef;
}

sub attr {
    my ($span, $key) = @_;
    my ($a) = grep { $_->{key} eq $key } @{ $span->{attributes} };
    return $a ? (values %{ $a->{value} })[0] : undef;
}

sub chat_span {
    my ($trace) = @_;
    for my $req (AgentTest::hooks_got($hooks)) {
        my $b = eval { decode_json($req->{body}) } or next;
        for my $rs (@{ $b->{resourceSpans} }) {
            for my $ss (@{ $rs->{scopeSpans} }) {
                my ($s) = grep { $_->{traceId} eq $trace
                                 && $_->{name} =~ /^chat / }
                          @{ $ss->{spans} };
                return $s if $s;
            }
        }
    }
    return undef;
}

# the receiver answers its first request 500: a turn's spans to spend it
is($t->turn($t->session, 'warm up')->{types}[-1], 'end', 'a first turn');
ok(AgentTest::wait_for(sub { my @h = AgentTest::hooks_got($hooks); @h },
                        10),
   'its spans went to the collector');

# 1. prices: per call, by kind of token, and what shows it
my %cost = (gpt => '0.004500', cached => '0.002500', claude => '0.005175',
            gem => '0.0016875', mini => '0.0000045');
my %r;
$r{gpt} = $t->turn($t->session, 'hello');
$r{cached} = $t->turn($t->session, 'cached');
$r{claude} = $t->turn($t->session, { message => 'hello', model => 'claude' });
$r{gem} = $t->turn($t->session, { message => 'hello', model => 'gem' });
$r{mini} = $t->turn($t->session, { message => 'tiny', model => 'mini' });
$r{plain} = $t->turn($t->session, { message => 'hello', model => 'plain' });
is($r{$_}{types}[-1], 'end', "a turn on $_") for sort keys %r;

# 1000 in at 2.50 and 200 out at 10.00 (and the warm-up's); 200 in at
# 2.50, 800 cached at 1.25, 100 out; Anthropic: 500 in at 3, 1000 read at
# 0.30, 500 written at 3.75, 100 out at 15; Gemini: 400 in at 1.25, 600
# cached at 0.3125, 100 out at 10; 10 in at 0.15, 5 out at 0.60
is(metric('gpt'), '0.011500', 'agent_cost_usd_total: gpt, three turns');
is(metric('claude'), $cost{claude},
   'claude: cache reads and writes at their prices');
is(metric('gem'), $cost{gem}, 'gem: cached content at its price');
is(metric('mini'), $cost{mini}, 'mini: nanodollars kept');
is(metric('plain'), undef, 'a model without price=: no series');
like($t->http('GET', '/metrics')->{content},
     qr/^# TYPE agent_cost_usd_total counter$/m, 'a counter');

for my $k (qw(gpt cached claude gem)) {
    my $span;
    ok(AgentTest::wait_for(sub {
        $span = chat_span($r{$k}{headers}{'x-trace-id'}) }, 10),
       "the chat span of the $k turn");
    my $v = attr($span, 'gen_ai.usage.cost');
    ok(defined $v && abs($v - $cost{$k}) < 1e-12,
       "gen_ai.usage.cost: $cost{$k}") or diag explain $span;
}
my $span;
ok(AgentTest::wait_for(sub {
    $span = chat_span($r{plain}{headers}{'x-trace-id'}) }, 10),
   'the chat span of the plain turn');
ok($span && !defined attr($span, 'gen_ai.usage.cost'),
   'no price: no cost attribute');

my %logged;
ok(AgentTest::wait_for(sub {
    %logged = map { (split /\|/)[0, 2] } grep { /\S/ } split /\n/,
              $t->slurp('cost.log');
    keys %logged >= 7 }, 10), 'the turns logged');
is($logged{ $r{$_}{events}[0]{session_id} }, $cost{$_},
   "\$agent_cost of the $_ turn") for qw(gpt cached claude gem mini);
is($logged{ $r{plain}{events}[0]{session_id} }, '-',
   '$agent_cost: empty without a price');

# 2. a budget crossed by a call: the turn stops at its next step, the
# next turn is refused, both saying it is the cost
my $r = turn_as('erin', '/tight/', 'tool once', 'budgeted');
my ($err) = grep { ($_->{type} // '') eq 'error' } @{ $r->{events} };
is($err->{code}, 'budget_exceeded', 'a call past cost=: budget_exceeded')
    or diag explain $r->{events};
like($err->{error}, qr/the cost budget of agent_limit is spent/,
     '... naming the cost budget');
$r = turn_as('erin', '/tight/', 'tool again', 'budgeted');
is($r->{status}, 429, 'the next turn: 429, as for tokens=');
like($r->{json}{error},
     qr/limit of cost in dollars of "erin" is reached \(agent_limit zone=mo/,
     'a JSON error naming the cost limit');
ok($r->{headers}{'retry-after'} > 0 && $r->{headers}{'retry-after'} <= 3600,
   'Retry-After: within the hour');

# 3. 64 turns of dave at once, two calls each of 100 in and 50 out at
# 2.50/10.00 ($0.00075), against $0.01
my @kids;
for my $i (1 .. 64) {
    my $k = fork() // die;
    if ($k == 0) {
        my $res = turn_as('dave', '/money/', "tool $i", 'budgeted',
                          timeout => 60);
        open my $fh, '>', "$dir/kid-$i.json";
        print $fh encode_json({ status => $res->{status},
                                last => $res->{events}[-1] // {} });
        close $fh;
        POSIX::_exit(0);
    }
    push @kids, $k;
}
waitpid($_, 0) for @kids;
my %by;
for my $i (1 .. 64) {
    open my $fh, '<', "$dir/kid-$i.json" or next;
    my $o = decode_json(do { local $/; <$fh> });
    my $k = $o->{status} == 429 ? '429'
          : ($o->{last}{type} // '') eq 'end' ? 'end'
          : ($o->{last}{code} // $o->{last}{type} // '?');
    $by{$k}++;
}
note explain \%by;
ok($by{429}, 'turns refused once $0.01 was spent: ' . ($by{429} // 0));
is(($by{end} // 0) + ($by{budget_exceeded} // 0) + ($by{429} // 0), 64,
   'every turn ended, was stopped, or was refused');

# reservations of calls under way may have refused turns that the
# budget, once they settled, still had room for: one at a time until the
# budget is spent
my $last;
for my $i (1 .. 10) {
    $last = turn_as('dave', '/money/', "tool after $i", 'budgeted');
    last if $last->{status} == 429;
}
is($last->{status}, 429, 'the budget spent: 429');
like($last->{json}{error}, qr/cost in dollars/, 'the cost, it says');

my (@calls, $dave);
for my $req ($t->{mock}->requests) {
    my ($u) = grep { $_->{role} eq 'user' } @{ $req->{body}{messages} };
    next unless ($u->{content} // '') =~ /^tool/;
    push @calls, $req;
    $dave++ if $u->{content} =~ /^tool (after )?\d+$/;
}
is(metric('budgeted'), sprintf('%.6f', @calls * 0.00075),
   'the metric: what the calls the model got cost, erin\'s one too');

# a call reserves max_tokens at the output price ($0.001) and its input
# at the input price, more than it costs: a call starts only while the
# spent and the reserved are under $0.01, so all but the last one started
# cost less than $0.01, and that one $0.00075
my $spent = $dave * 0.00075;
ok($spent < 0.01 + 0.00075 + 1e-9,
   "at most one call's reservation past \$0.01: \$$spent, $dave calls");

$t->check_log;
$t->stop;

# the configuration: prices and limits checked by nginx -t
for my $b (['agent_model x provider=openai url=http://x price=2.50;',
            qr/invalid value "2.50" in "price=2.50"/],
           ['agent_model x provider=openai url=http://x price=1/2/3/4/5;',
            qr/in "price=1\/2\/3\/4\/5"/],
           ['agent_model x provider=openai url=http://x price=a/1;',
            qr/IN\/OUT\[\/CACHED\[\/WRITE\]\]/],
           ['agent_limit_zone z key=$http_x size=1m; '
            . 'agent_limit zone=z cost=lots/1d;',
            qr/invalid value "lots\/1d" in "cost=lots\/1d"/])
{
    my $u = AgentTest->new;
    $u->mock(sub { {} });
    $u->write_conf($u->conf(http => $b->[0]));
    my ($ok, $out) = $u->test_conf;
    ok(!$ok, "nginx -t refuses $b->[0]");
    like($out, $b->[1], '... and says why');
}

done_testing;
