#!/usr/bin/perl
# The LangGraph store over agent_langgraph_api (issue 30, item 5): items
# put, got, replaced and deleted; searched by namespace prefix, by what
# their values hold (filter) and by words (query, full-text: FTS5 on
# SQLite, tsvector on PostgreSQL), paged; their namespaces listed (prefix,
# suffix, max_depth, paged); an item's ttl; every item its owner's
# (agent_owner); bad input a clear 422.  Then the store node kind: a
# graph puts, gets, searches and deletes the session owner's items, the
# same the API shows.  On both stores (make test-pg).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use Time::HiRes qw(sleep);

my $t = AgentTest->new;
$t->mock(sub { { text => 'hello' } });

my $conf = $t->conf(http => <<'HTTP');
agent_graph memo {
    channel user value;
    channel note value;
    channel recalled value;
    channel found value;
    channel gone value;
    node put store op=put "namespace=users.{{user}}" key=note
        value=text:note,by:user ttl=60;
    node get store op=get "namespace=users.{{user}}" key=note
        output=recalled;
    node find store op=search namespace=users "query={{input}}"
        output=found limit=5;
    node del store op=delete "namespace=users.{{user}}" key=other
        output=gone;
    edge START put;
    edge put get;
    edge get find;
    edge find del;
    edge del END;
}

agent_graph steps {
    channel user value;
    channel recalled value;
    node talk llm then=remember,recall;
    node remember store op=put "namespace=users.{{user}}" key=last
        value=who:user;
    node recall store op=get "namespace=users.{{user}}" key=last
        output=recalled;
    edge START talk;
    edge talk END;
}

agent_graph chain {
    channel user value;
    channel note value;
    channel kept value;
    channel parts sum;
    node pick template output=note "text=picked by {{user}}"
        then=keep,look;
    node keep store op=put "namespace=notes.{{user}}" key=last
        value=note:note count=parts;
    node look store op=get "namespace=notes.{{user}}" key=last
        output=kept count=parts;
    edge START pick;
    edge pick END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; }
    location /mine/ { agent_langgraph_api; agent_owner \$http_x_user;
                      agent_assistants memo steps chain; }
    $1};
$t->run($conf);

sub lg { my ($m, $p, $b, %h) = @_; return $t->http($m, "/lg$p", $b, %h) }
sub get_item {
    my ($ns, $key, $base, %h) = @_;
    my $r = $t->http('GET', ($base // '/lg') . '/store/items?namespace='
                     . join('.', @$ns) . "&key=$key", undef, %h);
    $r->{content} =~ s/\s+\z//;
    return $r;
}

# --- put, get, replace, delete ----------------------------------------------

my $r = lg('PUT', '/store/items', { namespace => [ 'users', 'u1' ],
                                    key => 'prefs', value => { lang => 'fr' } });
is($r->{status}, 204, 'an item put: 204');
$r = get_item([ 'users', 'u1' ], 'prefs');
is($r->{status}, 200, 'got');
is_deeply($r->{json}{namespace}, [ 'users', 'u1' ], 'its namespace, a list');
is($r->{json}{key}, 'prefs', 'its key');
is_deeply($r->{json}{value}, { lang => 'fr' }, 'its value');
like($r->{json}{created_at}, qr/^\d{4}-\d\d-\d\dT/, 'when it was made');
my $made = $r->{json}{created_at};
my $first = $r->{json}{updated_at};

sleep 0.01;
lg('PUT', '/store/items', { namespace => [ 'users', 'u1' ], key => 'prefs',
                            value => { lang => 'de', tz => 'UTC' } });
$r = get_item([ 'users', 'u1' ], 'prefs');
is_deeply($r->{json}{value}, { lang => 'de', tz => 'UTC' },
          'put again: the value replaced');
is($r->{json}{created_at}, $made, '... made when it was first');
ok($r->{json}{updated_at} gt $first, '... updated later');

$r = get_item([ 'users', 'u1' ], 'nothing');
is($r->{status}, 200, 'no such item: 200');
is($r->{content}, 'null', '... null, as LangGraph\'s servers answer');

is(lg('DELETE', '/store/items', { namespace => [ 'users', 'u1' ],
                                  key => 'prefs' })->{status}, 204,
   'deleted: 204');
is(get_item([ 'users', 'u1' ], 'prefs')->{content}, 'null', 'gone');
is(lg('DELETE', '/store/items', { namespace => [ 'users', 'u1' ],
                                  key => 'prefs' })->{status}, 204,
   'deleted again: 204 still');

# --- search -----------------------------------------------------------------

my %docs = (
    'a' => [ [ 'docs', 'eng' ], { title => 'nginx event loop', n => 1 } ],
    'b' => [ [ 'docs', 'eng' ], { title => 'SQLite write ahead log', n => 2 } ],
    'c' => [ [ 'docs', 'eng', 'old' ], { title => 'event loop history', n => 1 } ],
    'd' => [ [ 'docs', 'sales' ], { title => 'pricing', n => 3 } ],
    'e' => [ [ 'docsx' ], { title => 'not under docs', n => 1 } ],
);
for my $k (sort keys %docs) {
    lg('PUT', '/store/items', { namespace => $docs{$k}[0], key => $k,
                                value => $docs{$k}[1] });
    sleep 0.002;
}

sub keys_of { [ sort map { $_->{key} } @{ $_[0]{json}{items} } ] }

$r = lg('POST', '/store/items/search', { namespace_prefix => [ 'docs' ] });
is($r->{status}, 200, 'a search');
is_deeply(keys_of($r), [ qw(a b c d) ],
          'the prefix ["docs"]: its items and those below, not "docsx"');
is_deeply([ map { $_->{key} } @{ $r->{json}{items} } ], [ qw(d c b a) ],
          'the latest updated first');
$r = lg('POST', '/store/items/search', { namespace_prefix => [ 'docs', 'eng' ] });
is_deeply(keys_of($r), [ qw(a b c) ], 'a longer prefix');
$r = lg('POST', '/store/items/search', {});
ok(@{ $r->{json}{items} } >= 5, 'no prefix: all');
$r = lg('POST', '/store/items/search', { namespace_prefix => [ 'docs' ],
                                         filter => { n => 1 } });
is_deeply(keys_of($r), [ qw(a c) ], 'a filter: what the values hold');
$r = lg('POST', '/store/items/search', { namespace_prefix => [ 'docs' ],
                                         limit => 2, offset => 1 });
is_deeply([ map { $_->{key} } @{ $r->{json}{items} } ], [ qw(c b) ],
          'limit and offset');

$r = lg('POST', '/store/items/search', { namespace_prefix => [ 'docs' ],
                                         query => 'event loop' });
is_deeply(keys_of($r), [ qw(a c) ], 'a query: the items with its words');
ok(defined $r->{json}{items}[0]{score}, '... each with a score');
$r = lg('POST', '/store/items/search', { query => 'pricing OR "x' });
is($r->{status}, 200, 'a query with quotes and words of the search syntax');
is_deeply(keys_of($r), [ 'd' ], '... taken as words');
$r = lg('POST', '/store/items/search', { query => 'nowhere' });
is_deeply($r->{json}{items}, [], 'no match: none');

# index: false, not found by words
lg('PUT', '/store/items', { namespace => [ 'docs', 'hidden' ], key => 'h',
                            value => { title => 'event loop' },
                            index => JSON::PP::false });
$r = lg('POST', '/store/items/search', { query => 'event' });
is_deeply(keys_of($r), [ qw(a c) ], 'index false: not found by words');
$r = lg('POST', '/store/items/search', { namespace_prefix => [ 'docs', 'hidden' ] });
is_deeply(keys_of($r), [ 'h' ], '... but there');

# --- namespaces -------------------------------------------------------------

$r = lg('POST', '/store/namespaces', {});
is($r->{status}, 200, 'the namespaces');
is_deeply($r->{json}{namespaces},
          [ [ 'docs', 'eng' ], [ 'docs', 'eng', 'old' ], [ 'docs', 'hidden' ],
            [ 'docs', 'sales' ], [ 'docsx' ] ], 'each once, in order');
$r = lg('POST', '/store/namespaces', { prefix => [ 'docs' ], max_depth => 2 });
is_deeply($r->{json}{namespaces},
          [ [ 'docs', 'eng' ], [ 'docs', 'hidden' ], [ 'docs', 'sales' ] ],
          'a prefix, cut at max_depth: each once');
$r = lg('POST', '/store/namespaces', { suffix => [ 'old' ] });
is_deeply($r->{json}{namespaces}, [ [ 'docs', 'eng', 'old' ] ], 'a suffix');
$r = lg('POST', '/store/namespaces', { limit => 2, offset => 1 });
is_deeply($r->{json}{namespaces},
          [ [ 'docs', 'eng', 'old' ], [ 'docs', 'hidden' ] ], 'paged');

# --- ttl --------------------------------------------------------------------

lg('PUT', '/store/items', { namespace => [ 'tmp' ], key => 'k',
                            value => { a => 1 }, ttl => 0.02 });
is(get_item([ 'tmp' ], 'k')->{json}{value}{a}, 1, 'an item with a ttl');
# (its clock moved: the expiry ten seconds earlier)
$t->sqlite($t->dir . '/agent.db',
           'UPDATE items SET expires = expires - 10');
is(get_item([ 'tmp' ], 'k')->{content}, 'null', 'expired: gone');
$r = lg('POST', '/store/items/search', { namespace_prefix => [ 'tmp' ] });
is_deeply($r->{json}{items}, [], '... from searches too');
lg('PUT', '/store/items', { namespace => [ 'tmp2' ], key => 'k',
                            value => { a => 1 } });
is($t->sqlite($t->dir . '/agent.db',
              "SELECT count(*) FROM items WHERE ns = 'tmp'"), 0,
   'and removed by the next put');

# --- owners -----------------------------------------------------------------

my %ann = ('X-User' => 'ann');
my %bob = ('X-User' => 'bob');
is($t->http('PUT', '/mine/store/items', { namespace => [ 'n' ], key => 'k',
                                          value => { who => 'ann' } },
            %ann)->{status}, 204, 'ann puts an item');
is(get_item([ 'n' ], 'k', '/mine', %bob)->{content}, 'null',
   'bob does not see it');
is($t->http('PUT', '/mine/store/items', { namespace => [ 'n' ], key => 'k',
                                          value => { who => 'bob' } },
            %bob)->{status}, 204, 'bob puts his under the same name');
is(get_item([ 'n' ], 'k', '/mine', %ann)->{json}{value}{who}, 'ann',
   'ann\'s is hers still');
$t->http('DELETE', '/mine/store/items', { namespace => [ 'n' ], key => 'k' },
         %bob);
is(get_item([ 'n' ], 'k', '/mine', %ann)->{json}{value}{who}, 'ann',
   'bob\'s delete took his alone');
is_deeply([ map { $_->{value}{who} } @{ $t->http('POST',
    '/mine/store/items/search', {}, %ann)->{json}{items} } ], [ 'ann' ],
    'ann\'s search: hers alone');
is_deeply($t->http('POST', '/mine/store/namespaces', {}, %bob)->{json}
          {namespaces}, [], 'bob\'s namespaces: none');
is(get_item([ 'n' ], 'k')->{content}, 'null',
   'a location without owners sees none of theirs');
is($t->http('GET', '/mine/store/items?namespace=n&key=k')->{status}, 401,
   'no owner where one is needed: 401');

# --- the store node ---------------------------------------------------------

$r = $t->http('POST', '/mine/runs/wait', { assistant_id => 'memo', input => {
    user => 'u1', note => 'remember the milk',
    messages => [ { role => 'user', content => 'milk' } ] } }, %ann);
is($r->{status}, 200, 'a graph with store nodes ran') or diag($r->{content});
is_deeply($r->{json}{recalled}, { text => 'remember the milk', by => 'u1' },
          'put, then got: an object of channels under names');
is(scalar @{ $r->{json}{found} }, 1, 'searched by the input\'s words');
is($r->{json}{found}[0]{namespace}, 'users.u1', '... the item found');
is_deeply($r->{json}{found}[0]{value}{by}, 'u1', '... with its value');
is($r->{json}{gone}, JSON::PP::false, 'a delete of none: false');
is(get_item([ 'users', 'u1' ], 'note', '/mine', %ann)->{json}{value}{text},
   'remember the milk', 'the owner\'s, as the API shows it');
is(get_item([ 'users', 'u1' ], 'note', '/mine', %bob)->{content}, 'null',
   'not another owner\'s');
$r = $t->http('POST', '/mine/runs/wait', { assistant_id => 'memo', input => {
    user => '', note => 'x',
    messages => [ { role => 'user', content => 'x' } ] } }, %ann);
is($r->{json}{__error__}{error}, 'node_failed',
   'a namespace with an empty label: the run fails');
like($r->{json}{__error__}{message}, qr/has an empty label/, '... and says');

# --- then=: store work inside another node's step ---------------------------

$r = $t->http('POST', '/mine/threads', {}, %ann);
my $tid = $r->{json}{thread_id};
$r = $t->http('POST', "/mine/threads/$tid/runs/stream", {
    assistant_id => 'steps', stream_mode => [ 'updates' ], input => {
    user => 'u2', messages => [ { role => 'user', content => 'hi' } ] } },
    %ann);
my @ups = map { /^data: (.*)/m ? decode_json($1) : () }
          grep { /^event: updates/m } split /\n\n/, $r->{content};
is_deeply([ map { keys %$_ } @ups ], [ 'talk' ],
          'then=: one step, the node\'s, no updates of its parts');
is($ups[0]{talk}{messages}[0]{content}, 'hello', '... its model answered');
is_deeply($ups[0]{talk}{recalled}, { who => 'u2' },
          '... then it put, then got what it put, in the same step');
is(get_item([ 'users', 'u2' ], 'last', '/mine', %ann)->{json}{value}{who},
   'u2', '... the item is the owner\'s, as the API shows it');
$r = $t->http('POST', "/mine/threads/$tid/history", {}, %ann);
is_deeply([ map { $_->{metadata}{step} } @{ $r->{json} } ], [ 1, 0, -1 ],
          '... one checkpoint for the step (then the start and the input)');
is_deeply($r->{json}[0]{values}{recalled}, { who => 'u2' },
          '... which holds what its parts wrote');
$r = $t->http('GET', '/mine/assistants/steps/graph', undef, %ann);
is_deeply([ map { $_->{id} } @{ $r->{json}{nodes} } ],
          [ qw(__start__ talk __end__) ],
          '... its parts are no nodes of its graph');
$r = $t->http('POST', "/mine/threads/$tid/runs/wait", {
    assistant_id => 'steps', input => { user => '',
    messages => [ { role => 'user', content => 'again' } ] } }, %ann);
is($r->{json}{__error__}{error}, 'node_failed', 'a part that fails fails '
   . 'the step');
$r = $t->http('GET', "/mine/threads/$tid/state", undef, %ann);
is(scalar @{ $r->{json}{values}{messages} }, 3,
   '... whose answer is not kept (the input is)');
is($r->{json}{values}{recalled}{who}, 'u2', '... nor its writes');

$r = $t->http('POST', '/mine/runs/wait', { assistant_id => 'chain',
    input => { user => 'u3', messages => [ { role => 'user',
                                             content => 'x' } ] } }, %ann);
is_deeply($r->{json}{kept}, { note => 'picked by u3' },
          'each part reads what the node and the parts before it wrote');
is($r->{json}{parts}, 2, '... and counts itself (count=)');
for my $ask ([ { interrupt_before => [ 'remember' ],
                 input => { user => 'u2' } }, 'a breakpoint at' ],
             [ { command => { goto => 'remember' } }, 'a goto to' ]) {
    $r = $t->http('POST', "/mine/threads/$tid/runs/wait",
                  { assistant_id => 'steps', %{ $ask->[0] } }, %ann);
    is($r->{status}, 422, "$ask->[1] a node that is only a part: 422");
    like($r->{content}, qr/has no node "remember"/, '... said');
}
is($t->http('POST', "/mine/threads/$tid/state", { values => { user => 'x' },
                                                  as_node => 'remember' },
            %ann)->{status}, 422, 'a state update as one: 422');

# --- bad input --------------------------------------------------------------

for my $bad ([ { key => 'k', value => {} }, 'no namespace' ],
             [ { namespace => [], key => 'k', value => {} }, 'namespace []' ],
             [ { namespace => [ 'a.b' ], key => 'k', value => {} },
               'a label with a dot' ],
             [ { namespace => [ '' ], key => 'k', value => {} },
               'an empty label' ],
             [ { namespace => [ 1 ], key => 'k', value => {} },
               'a label that is no string' ],
             [ { namespace => [ ('x') x 17 ], key => 'k', value => {} },
               '17 labels' ],
             [ { namespace => [ 'a' ], value => {} }, 'no key' ],
             [ { namespace => [ 'a' ], key => 'x' x 1025, value => {} },
               'a key of 1025 bytes' ],
             [ { namespace => [ 'a' ], key => 'k', value => [ 1 ] },
               'a value that is no object' ],
             [ { namespace => [ 'a' ], key => 'k', value => {}, ttl => -1 },
               'a ttl below 0' ],
             [ { namespace => [ 'a' ], key => 'k', value => {}, ttl => 'x' },
               'a ttl that is no number' ]) {
    $r = lg('PUT', '/store/items', $bad->[0]);
    is($r->{status}, 422, "put, $bad->[1]: 422");
}
like(lg('PUT', '/store/items', { namespace => [ 'a.b' ], key => 'k',
                                 value => {} })->{content},
     qr/"namespace" must be a list of 1 to 16 labels/, '... said');
is($t->http('PUT', '/lg/store/items', '{"namespace": [', 'Content-Type',
            'application/json')->{status}, 400, 'bad JSON: 400');
for my $bad ([ { limit => 0 }, 'limit 0' ], [ { limit => 1001 }, 'limit 1001' ],
             [ { offset => -1 }, 'offset -1' ],
             [ { filter => [ 1 ] }, 'a filter that is no object' ],
             [ { query => 5 }, 'a query that is no string' ],
             [ { query => 'x' x 1025 }, 'a query of 1025 bytes' ],
             [ { namespace_prefix => 'docs' }, 'a prefix that is no list' ]) {
    is(lg('POST', '/store/items/search', $bad->[0])->{status}, 422,
       "search, $bad->[1]: 422");
}
is(lg('POST', '/store/namespaces', { max_depth => 0 })->{status}, 422,
   'namespaces, max_depth 0: 422');
is($t->http('GET', '/lg/store/items?namespace=a')->{status}, 422,
   'get without a key: 422');
$r = lg('POST', '/store/items', {});
is($r->{status}, 405, 'POST /store/items: 405');
is($r->{headers}{allow}, 'GET, PUT, DELETE', '... Allow says what it takes');

# a deeply nested value: refused by the parser, never stored
my $deep = '{"namespace": ["a"], "key": "k", "value": ' . ('{"a":' x 5000)
           . '1' . ('}' x 5000) . '}';
$r = $t->http('PUT', '/lg/store/items', $deep, 'Content-Type',
              'application/json');
ok($r->{status} == 400 || $r->{status} == 422, 'a value nested 5000 deep: '
   . $r->{status});
is(get_item([ 'a' ], 'k')->{content}, 'null', '... not stored');

$t->stop;
$t->check_log;

# --- nginx -t ---------------------------------------------------------------

my $g = AgentTest->new;
$g->mock(sub { { text => 'x' } });

sub conf_test {
    my ($node) = @_;
    $g->write_conf($g->conf(http => "agent_graph g {\n channel c value;\n"
        . " node n store $node;\n edge START n;\n edge n END;\n}\n"));
    return ($g->test_conf)[1];
}

like(conf_test('op=get key=k output=c'), qr/needs namespace=/,
     'a store node without a namespace');
like(conf_test('op=get namespace=a output=c'), qr/needs key=/,
     '... a get without a key');
like(conf_test('op=get namespace=a key=k'), qr/needs output=CHANNEL to get/,
     '... a get without output');
like(conf_test('op=put namespace=a key=k'), qr/needs value=CHANNEL/,
     '... a put without value');
like(conf_test('op=put namespace=a key=k value=nope'),
     qr/value=nope: a channel of the graph/, '... a value of no channel');
like(conf_test('op=put namespace=a key=k value=x:c,:c'),
     qr/a channel of the graph, or NAME:CHANNEL/, '... a field without name');
like(conf_test('op=merge namespace=a key=k'), qr/one of put get search delete/,
     '... an unknown op');
like(conf_test('op=search namespace=a output=c limit=0'), qr/limit/,
     '... a limit of 0');

sub then_test {
    my ($nodes) = @_;
    $g->write_conf($g->conf(http => "agent_graph g {\n channel c value;\n"
        . " $nodes\n edge START n;\n edge n END;\n}\n"));
    return ($g->test_conf)[1];
}

my $put = 'store op=put namespace=a key=k value=c';
like(then_test("node n template text=x then=p;"),
     qr/then=p: "p" is no other node of the graph/, 'then= of no node');
like(then_test("node n template text=x then=n;"),
     qr/then=n: "n" is no other node/, '... of itself');
like(then_test("node n template text=x then=p; node p $put "
               . 'interrupt_before=on;'),
     qr/"p" waits, runs tool calls or has then= of its own: a part of a step/,
     '... of a node that waits');
like(then_test("node n template text=x then=p; node p $put then=q; "
               . "node q $put;"),
     qr/"p" waits, runs tool calls or has then= of its own/, '... of a node with then=');
like(then_test("node n template text=x then=p; node p $put; node q $put;"),
     qr/no edge leaves the node "q"/,
     'a node that is no part still needs its edges');
unlike(then_test("node n template text=x then=p,q; node p $put; "
                 . "node q $put;"), qr/emerg/, 'parts need none');
like(then_test("node n template text=x then=p; node p $put; "
               . "node m template text=y; edge m p;"),
     qr/its edge leads to "p", only a part of other nodes' steps/,
     'an edge to a node that is only a part');
$g->write_conf($g->conf(http => "agent_graph g {\n channel c value;\n"
    . " node n template text=x then=p;\n node p $put;\n edge START p;\n"
    . " edge n END;\n}\n"));
like(($g->test_conf)[1], qr/START leads to "p", only a part/,
     '... START to one');
like(then_test("node n template text=x then=p; node p tools;"),
     qr/"p" waits, runs tool calls or has then= of its own/,
     'a part that runs tool calls');
like(then_test("node n template text=x then=p; node p $put count=nope;"),
     qr/count=nope of the node "p" names no sum channel/,
     'a part\'s count= is checked');

done_testing;
