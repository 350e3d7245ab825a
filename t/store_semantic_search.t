#!/usr/bin/perl
# Semantic store search (issue 53, items 1 and 2): agent_embeddings names an
# agent_model; items put with index are embedded as documents (OpenAI's
# /v1/embeddings, Gemini's batchEmbedContents with RETRIEVAL_DOCUMENT) and
# their float32 vectors kept beside them; POST /store/items/search with
# query embeds it as a query and ranks by cosine similarity, with "score"
# in each item; index: false, the namespace prefix, the filter and the
# owner apply; a provider that errs is a clear 502; nginx -t checks the
# model.  The scripted model embeds a bag of words.  On both stores
# (t/pg/run prove t/store_semantic_search.t).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use JSON::PP;
use IO::Socket::INET;

my $t = AgentTest->new;
$t->mock(sub { { text => 'hello' } });

my $bad = MockLLM->new(dir => $t->{dir}, name => 'bad',
                       script => sub { { text => 'x' } },
                       embed => sub {
    my $in = $_[0]{input}[0] // '';
    # answers no provider should give: each a clear error, never stored
    return { status => 200, body => '{"data":[{"embedding":[1,"x"]}]}' }
        if $in =~ /garbage/;
    return { status => 200, body => '{"data":[{"embedding":[1]},'
                                    . '{"embedding":[2]}]}' }
        if $in =~ /twice/;
    return { status => 200, body => 'not json' } if $in =~ /notjson/;
    return { status => 503, message => 'overloaded' } if $in =~ /fallback/;
    return { status => 500, message => 'slow', delay => 1 } if $in =~ /slow/;
    return { status => 400, message => 'no such model' };
});
my $bport = $bad->port;

my $conf = $t->conf(http => <<"HTTP");
agent_model gem provider=gemini url=http://127.0.0.1:%%MOCK%% model=gem-1;
agent_model priced provider=openai price=1000/0
    url=http://127.0.0.1:%%MOCK%%/v1/chat/completions;
agent_model flaky provider=openai retries=0 fallback=mock
    url=http://127.0.0.1:$bport/v1/chat/completions;
agent_model broken provider=openai retries=0
    url=http://127.0.0.1:$bport/v1/chat/completions;
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
        agent_owner \$http_x_user; agent_embeddings mock; }
    location /gem/ { agent_langgraph_api; agent_owner \$http_x_user;
        agent_embeddings gem dims=32 fields=text; }
    location /bad/ { agent_langgraph_api; agent_embeddings broken; }
    location /priced/ { agent_langgraph_api; agent_embeddings priced; }
    location /flaky/ { agent_langgraph_api; agent_embeddings flaky; }
    location = /metrics { agent_metrics; }
    location /plain/ { agent_langgraph_api; agent_owner \$http_x_user; }
    $1};
$t->run($conf);

sub put {
    my ($base, $user, $ns, $key, $value, %o) = @_;
    return $t->http('PUT', "$base/store/items",
                    { namespace => $ns, key => $key, value => $value, %o },
                    'X-User' => $user)->{status};
}

sub search {
    my ($base, $user, %body) = @_;
    my $r = $t->http('POST', "$base/store/items/search", \%body,
                     'X-User' => $user);
    return $r;
}

sub embeds {
    grep { $_->{path} =~ /embed/i } $t->{mock}->requests;
}

# --- OpenAI's embeddings ----------------------------------------------------

my %docs = (
    cat => 'The cat sat on the mat',
    dog => 'A dog and a cat play on the mat',
    stock => 'Stock markets fell sharply today',
);
for my $k (sort keys %docs) {
    is(put('/lg', 'ann', [ 'docs' ], $k, { text => $docs{$k},
                                           topic => $k eq 'stock'
                                                    ? 'money' : 'pets' }),
       204, "ann's $k put with its vector");
}
is(put('/lg', 'ann', [ 'docs' ], 'hidden', { text => 'cat mat cat mat' },
       index => JSON::PP::false), 204, 'an item put with index: false');
is(put('/lg', 'ann', [ 'other' ], 'cat2', { text => 'the cat on the mat' }),
   204, 'an item under another namespace');
is(put('/lg', 'bob', [ 'docs' ], 'bobcat', { text => 'cat on the mat' }),
   204, "bob's item");

my @e = embeds();
is(scalar @e, 5, 'five documents embedded, none for index: false');
is($e[0]{path}, '/v1/embeddings', 'at /v1/embeddings, beside chat');
is($e[0]{body}{model}, 'mock-1', 'the agent_model\'s model');
like($e[0]{body}{input}[0], qr/"text":"The cat sat/,
     'the whole value by default ("$")');

my $r = search('/lg', 'ann', namespace_prefix => [ 'docs' ],
               query => 'where the cat sat on the mat', limit => 10);
is($r->{status}, 200, 'a search by meaning: 200');
my @items = @{ $r->{json}{items} // [] };
is_deeply([ map { $_->{key} } @items ], [ 'cat', 'dog', 'stock' ],
          'the nearest first; index: false, the other namespace and bob\'s '
          . 'left out');
ok($items[0]{score} > $items[2]{score}, 'each with its score, decreasing')
    or diag explain \@items;
ok($items[0]{score} > 0.5 && $items[0]{score} <= 1.0001,
   'a cosine similarity');
is(ref $items[0]{value}, 'HASH', 'the item\'s value');
is((embeds())[-1]{body}{input}[0], 'where the cat sat on the mat',
   'the query embedded');

$r = search('/lg', 'ann', namespace_prefix => [ 'docs' ],
            query => 'cat mat', filter => { topic => 'money' });
is_deeply([ map { $_->{key} } @{ $r->{json}{items} } ], [ 'stock' ],
          'the filter applies first');

$r = search('/lg', 'ann', query => 'cat on the mat', limit => 2);
is_deeply([ sort map { $_->{key} } @{ $r->{json}{items} } ],
          [ 'cat', 'cat2' ], 'no prefix: every namespace, the limit kept');

$r = search('/lg', 'ann', query => 'cat on the mat', limit => 2,
            offset => 1);
is(scalar @{ $r->{json}{items} }, 2, 'an offset');

$r = search('/lg', 'bob', query => 'stock markets');
is_deeply([ map { $_->{key} } @{ $r->{json}{items} } ], [ 'bobcat' ],
          'bob finds only his own');

$r = search('/lg', 'ann', namespace_prefix => [ 'docs' ], limit => 10);
is(scalar @{ $r->{json}{items} }, 4, 'no query: every item, no embedding');
ok(!exists $r->{json}{items}[0]{score}, '... and no score');

# --- many items: read in pages (PostgreSQL), the oldest scored too --------

my $needle = unpack 'H*', pack 'f<*',
    @{ MockLLM::embed_vector('{"i":1,"text":"a needle in the haystack"}',
                             64) };
my $hay = unpack 'H*', pack 'f<*',
    @{ MockLLM::embed_vector('{"i":2,"text":"straw and more straw"}', 64) };
my $rows = "'many', 'bulk', 'k' || i, '{\"i\":' || i || '}',"
           . " '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'";
my $cols = 'owner, ns, key, value, created_at, updated_at, embedding';
$t->sqlite("$t->{dir}/agent.db", $ENV{AGENT_PG}
    ? "INSERT INTO items ($cols) SELECT $rows, CASE WHEN i = 1"
      . " THEN '\\x$needle'::bytea ELSE '\\x$hay'::bytea END"
      . " FROM generate_series(1, 2500) i"
    : "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c"
      . " WHERE i < 2500) INSERT INTO items ($cols) SELECT $rows,"
      . " CASE WHEN i = 1 THEN X'$needle' ELSE X'$hay' END FROM c");
$r = search('/lg', 'many', query => 'needle in a haystack', limit => 3);
is($r->{status}, 200, '2500 items searched');
is_deeply([ map { $_->{key} } @{ $r->{json}{items} } ], [ 'k1', 'k2500',
                                                          'k2499' ],
          'the oldest, the nearest, first; then the newest of equals');
ok($r->{json}{items}[0]{score} > $r->{json}{items}[1]{score},
   '... scored above them');

# --- Gemini: documents as documents, queries as queries ---------------------

is(put('/gem', 'ann', [ 'g' ], 'one', { text => 'red apples and pears',
                                        note => 'fruit' }),
   204, 'Gemini: an item put');
is(put('/gem', 'ann', [ 'g' ], 'two', { text => 'fast cars and trucks' }),
   204, 'another');
is(put('/gem', 'ann', [ 'g' ], 'three', { note => 'no text field' }),
   204, 'one without the location\'s field: not embedded');
$r = search('/gem', 'ann', namespace_prefix => [ 'g' ],
            query => 'apples or pears');
is_deeply([ map { $_->{key} } @{ $r->{json}{items} } ], [ 'one', 'two' ],
          'ranked by Gemini\'s vectors');
my @g = grep { $_->{path} =~ /batchEmbedContents/ } embeds();
is(scalar @g, 3, 'three calls of batchEmbedContents');
is($g[0]{path}, '/models/gem-1:batchEmbedContents', 'the model\'s path');
is($g[0]{body}{requests}[0]{taskType}, 'RETRIEVAL_DOCUMENT',
   'an item as a document');
is($g[0]{body}{requests}[0]{content}{parts}[0]{text},
   'red apples and pears', 'its fields= text alone');
is($g[0]{body}{requests}[0]{outputDimensionality}, 32, 'dims=');
is($g[0]{body}{requests}[0]{model}, 'models/gem-1', 'named in the request');
is($g[-1]{body}{requests}[0]{taskType}, 'RETRIEVAL_QUERY',
   'the query as a query');

is(put('/gem', 'ann', [ 'g' ], 'four', { text => 'x', more => 'y' },
       index => [ 'more' ]), 204, 'a put\'s own index fields');
is((grep { $_->{path} =~ /batch/ } embeds())[-1]{body}{requests}[0]
       {content}{parts}[0]{text}, 'y', '... embedded instead');
is($t->http('PUT', '/gem/store/items', { namespace => [ 'g' ], key => 'x',
                                         value => {}, index => 'text' },
            'X-User' => 'ann')->{status}, 422, 'index as a string: 422');

# --- words still, without agent_embeddings ---------------------------------

$r = search('/plain', 'ann', namespace_prefix => [ 'docs' ],
            query => 'stock');
is_deeply([ map { $_->{key} } @{ $r->{json}{items} } ], [ 'stock' ],
          'without agent_embeddings: by words');

# --- a provider that errs ---------------------------------------------------

$r = $t->http('PUT', '/bad/store/items', { namespace => [ 'x' ], key => 'k',
                                           value => { text => 'hi' } });
is($r->{status}, 502, 'an item the model cannot embed: 502');
like($r->{content}, qr/embeddings model failed.*400.*no such model/,
     '... saying why');
like($t->http('GET', '/bad/store/items?namespace=x&key=k')->{content},
     qr/^null/, '... and not written');
$r = $t->http('POST', '/bad/store/items/search', { query => 'hi' });
is($r->{status}, 502, 'a query it cannot embed: 502');
for my $case ([ garbage => qr/not a number/ ],
              [ twice => qr/not one vector per text/ ],
              [ notjson => qr/not a JSON object/ ]) {
    $r = $t->http('PUT', '/bad/store/items', { namespace => [ 'x' ],
                                               key => 'k',
                                               value => { t => $case->[0] } });
    is($r->{status}, 502, "an answer of $case->[0]: 502");
    like($r->{content}, $case->[1], '... saying why');
}
is($t->http('PUT', '/bad/store/items', { namespace => [ 'x' ], key => 'k',
                                         value => { text => 'hi' },
                                         index => JSON::PP::false })
       ->{status}, 204, 'index: false needs no model');
is(search('/lg', 'ann', query => 'cat')->{status}, 200,
   'the other locations answer on');

# a client gone while its text is embedded: the call ends, nothing breaks
{
    my $body = encode_json({ namespace => [ 'x' ], key => 'gone',
                             value => { t => 'slow' } });
    my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$t->{port}")
        or die;
    print $c "PUT /bad/store/items HTTP/1.1\r\nHost: x\r\n"
             . "Content-Type: application/json\r\nContent-Length: "
             . length($body) . "\r\n\r\n$body";
    my $seen;
    for (1 .. 100) {
        last if $seen = grep { ($_->{body}{input}[0] // '') =~ /slow/ }
                        $bad->requests;
        select(undef, undef, undef, 0.05);
    }
    ok($seen, 'a client\'s item sent to the model');
    close $c;
    my $ended;
    for (1 .. 200) {
        last if $ended = $t->slurp('error.log') =~ /answered 500: slow/;
        select(undef, undef, undef, 0.05);
    }
    ok($ended, '... which answers after the client left');
    like($t->http('GET', '/bad/store/items?namespace=x&key=gone')->{content},
         qr/^null/, '... nothing written, the worker answers on');
}

# --- LangGraph's JS SDK: store.searchItems(ns, {query}) -------------------

SKIP: {
    local $ENV{AGENT_SDK_HEADERS} = '{"X-User":"sdk"}';
    my $s = $t->lg_sdk("http://127.0.0.1:$t->{port}/lg", 'semantic');
    skip 'no @langchain/langgraph-sdk (npm)', 5 unless $s;
    ok(!exists $s->{$_}{error}, "SDK: $_") for qw(put1 put4);
    my @keys = map { $_->{key} } @{ $s->{search}{items} // [] };
    is_deeply([ sort @keys ], [ 'car', 'own', 'pet' ],
              'SDK: searchItems with a query, index: false left out')
        or diag explain $s;
    is($keys[-1], 'car', 'SDK: the far one last');
    ok(($s->{search}{items}[0]{score} // 0) > 0, 'SDK: each with its score');
}

# --- the model's fallback ---------------------------------------------------

my $before = () = embeds();
is($t->http('PUT', '/flaky/store/items', { namespace => [ 'f' ], key => 'k',
                                           value => { t => 'fallback' } })
       ->{status}, 204, 'a model that answers 503: its fallback embeds');
is(scalar(() = embeds()), $before + 1, '... the fallback asked once');
like($t->slurp('error.log'), qr/model "flaky".*503.*falling back to "mock"/,
     '... as a chat call falls back, logged');
$r = $t->http('POST', '/flaky/store/items/search', { query => 'fallback' });
is_deeply([ map { $_->{key} } @{ $r->{json}{items} } ], [ 'k' ],
          '... and its vector found');

# --- what embeddings cost ---------------------------------------------------

is($t->http('PUT', '/priced/store/items', { namespace => [ 'p' ], key => 'k',
                                            value => { t => 'x' } })->{status},
   204, 'an item embedded by a priced model');
my $m = $t->http('GET', '/metrics')->{content};
like($m, qr/^agent_tokens_total\{model="priced",kind="input"\} 3$/m,
     'its input tokens counted (3, the mock\'s usage)');
like($m, qr/^agent_cost_usd_total\{model="priced"\} 0\.003000$/m,
     '... and their price (3 at 1000 dollars a million)');

# --- nginx -t ----------------------------------------------------------------

my $g = AgentTest->new;
for my $case ([ 'agent_embeddings nope;', qr/unknown model "nope"/ ],
              [ 'agent_embeddings claude;',
                qr/provider=anthropic, which has no embeddings/ ],
              [ 'agent_embeddings mock dims=0;', qr/dims/ ])
{
    my $c = $g->conf(http => 'agent_model claude provider=anthropic '
                             . "model=c;\n$case->[0]");
    $g->write_conf($c);
    my ($ok, $out) = $g->test_conf;
    ok(!$ok, "nginx -t refuses $case->[0]");
    like($out, $case->[1], '... saying why');
}

$bad->stop;
$t->stop;
$t->check_log;

done_testing;
