#!/usr/bin/perl
# The chat page (conf/html) in a real browser: Debian's Chromium driven by
# npm's playwright-core (t/browser/page.js) against nginx with the module
# and the scripted model.  A CSV is uploaded, a question asked; the answer
# streams with a cursor, the SQL result shows as a table, ask_analyst's
# Vega-Lite chart renders as an SVG with marks, the <img onerror> and
# <script> the model wrote do not run; the reopened session shows it all
# again.  The screenshot is build/screenshot.png.  Skipped only where
# Chromium cannot be installed.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $root = AgentTest->root;
my $chromium = $ENV{CHROMIUM} // '/usr/bin/chromium';
my $modules = "$root/build/browser/node_modules";

if (!-x $chromium && $> == 0) {
    system('sh', '-c', 'DEBIAN_FRONTEND=noninteractive apt-get install -y '
           . '-qq chromium >/dev/null 2>&1');
}
plan skip_all => "no Chromium at $chromium, and it cannot be installed "
                 . '(apt-get install chromium)'
    unless -x $chromium;

if (!-d "$modules/playwright-core") {
    system('sh', '-c', "npm install --prefix $root/build/browser "
           . 'playwright-core@1.65.1 --no-audit --no-fund --loglevel=error '
           . '>/dev/null 2>&1');
}
plan skip_all => 'playwright-core could not be installed from npm'
    unless -d "$modules/playwright-core";

my $t = AgentTest->new;

my $spec = { '$schema' => 'https://vega.github.io/schema/vega-lite/v5.json',
             mark => 'bar',
             data => { values => [ { city => 'Oslo', people => 700000 },
                                   { city => 'Bergen', people => 285000 },
                                   { city => 'Trondheim', people => 212000 } ] },
             encoding => { x => { field => 'city', type => 'nominal' },
                           y => { field => 'people',
                                  type => 'quantitative' } } };
my $answer = "**Oslo** is the largest city, then Bergen and Trondheim.\n\n"
    . "- Oslo: 700000\n- Bergen: 285000\n\n"
    . 'Shown as text: <img src=x onerror="window.__pwned=1">'
    . '<script>window.__pwned=2</script> end.';

$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    return { text => encode_json($spec) }
        if $m[0]{content} =~ /^You write a Vega-Lite/;
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my @results = grep { $_->{role} eq 'tool' } @m[$u + 1 .. $#m];
    return { tools => [ [ 'call_sql', 'execute_sql_query', encode_json({
               query => 'SELECT city, people FROM csv_data '
                        . 'ORDER BY people DESC' }) ] ] } if !@results;
    return { tools => [ [ 'call_chart', 'ask_analyst',
                          encode_json({ query => 'a bar chart of people '
                                                 . 'by city' }) ] ] }
        if @results == 1;
    return { text => $answer, delay => 0.04,
             pieces => [ $answer =~ /(.{1,12})/gs ] };
});

my $conf = $t->conf(http => <<"HTTP");
agent_prompts $root/prompts;
agent_graph page {
    channel sql_result value;
    node agent llm prompt=react_system.md
        tools=load_csv_data,execute_sql_query,ask_analyst;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
agent_use_graph page;
HTTP
$conf =~ s{(location /api/sessions/)}
          {location / { root $root/conf/html; include $root/conf/html/types.conf; }\n        $1};
$t->run($conf);

my $csv = $t->dir . '/cities.csv';
open my $fh, '>', $csv or die $!;
print $fh "city,people\nOslo,700000\nBergen,285000\nTrondheim,212000\n";
close $fh;

mkdir "$root/build";
my $shot = "$root/build/screenshot.png";
unlink $shot;
my $url = 'http://127.0.0.1:' . $t->port . '/';
my $out = `NODE_PATH=$modules CHROMIUM=$chromium timeout 120 node $root/t/browser/page.js $url $csv $shot 2>&1`;
my ($line) = grep { /^\{/ } split /\n/, $out;
my $r = eval { decode_json($line // '') };
ok($r, 'the browser script reported') or diag($out);
$r //= {};

is_deeply($r->{errors}, [], 'no error in the page or the driver')
    or diag(explain $r->{errors});
ok($r->{session}, 'a new session from the page');
like($r->{upload} // '', qr/cities\.csv: table \w+, 3 rows/, 'the CSV uploaded');
ok(length($r->{streamingText} // '') < length($answer),
   'the answer seen while it streamed, with a cursor');
is($r->{cursorAfter}, 0, 'no cursor once it ended');

for my $when (qw(live reopened)) {
    my $f = $r->{$when} // {};
    is($f->{rows}, 3, "$when: the result as a table of three rows");
    is_deeply($f->{cells}, [ 'Oslo', '700000' ], "$when: its first row");
    like($f->{sql} // '', qr/^SELECT city, people FROM csv_data/,
         "$when: the SQL shown");
    ok(($f->{chartMarks} // 0) >= 3, "$when: the chart drawn "
       . "($f->{chartMarks} bar marks)");
    is($f->{strong}, 'Oslo', "$when: markdown rendered");
    like($f->{answer} // '', qr/Shown as text: <img src=x onerror="window.__pwned=1"><script>window.__pwned=2<\/script> end\./,
         "$when: the HTML the model wrote shown as text");
    is($f->{images}, 0, "$when: no image element from it");
    ok($f->{styled}, "$when: the page's stylesheet applied");
    is($f->{pwned}, undef, "$when: the injected onerror and script did not run");
    is($f->{onerror}, 0, "$when: no onerror attribute in the page");
    is($f->{scripts}, 0, "$when: no script element from the model");
}

ok(-s $shot, "a screenshot in $shot");

$t->stop;
$t->check_log;
done_testing;
