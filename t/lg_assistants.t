#!/usr/bin/perl
# LangGraph's assistants at agent_langgraph_api: made over the location's
# graphs, kept in the store for their owner (agent_owner), each update a
# new version; versions listed and one made the latest again; searched
# and counted with the graphs' own; a run on one; deleted.  On SQLite
# and (t/pg/run) PostgreSQL alike.  Channels declared config=on are
# written by a run's or an assistant's config.configurable; their
# type= and enum= are their schemas'.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub { return { text => 'Hello from the mock' } });

my $conf = $t->conf(http => <<'HTTP');
agent_owner $http_x_user;
agent_graph chat {
    channel tone value;
    channel level value config=on type=integer default=1;
    channel mood value enum=calm,sad;
    node model llm;
    edge START model;
    edge model END;
}
agent_graph other {
    node model llm;
    edge START model;
    edge model END;
}
agent_graph hidden {
    node model llm;
    edge START model;
    edge model END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
    agent_use_graph chat; agent_assistants chat other; }
    $1};
$t->run($conf);

my %ann = ('X-User' => 'ann');
my %bob = ('X-User' => 'bob');
sub lg { my ($m, $p, $b, %h) = @_; return $t->http($m, "/lg$p", $b, %h) }

# made over a graph of the location, with its fields
my $r = lg('POST', '/assistants', { graph_id => 'chat', name => 'woof',
    description => 'foo', config => { configurable => { model => 'mock' } },
    context => { tone => 'dry' }, metadata => { team => 'a' } }, %ann);
is($r->{status}, 200, 'POST /assistants makes one');
my $a = $r->{json};
my $id = $a->{assistant_id};
like($id, qr/^[0-9a-f-]{36}$/, 'with an id of its own');
is_deeply([ @$a{qw(graph_id name description version)} ],
          [ 'chat', 'woof', 'foo', 1 ], 'its graph, name, description, v1');
is_deeply($a->{config}, { configurable => { model => 'mock' } }, 'config');
is_deeply($a->{context}, { tone => 'dry' }, 'context');
is_deeply($a->{metadata}, { team => 'a' }, 'metadata');
ok($a->{created_at} && $a->{updated_at}, 'its times');

$r = lg('GET', "/assistants/$id", undef, %ann);
is($r->{json}{name}, 'woof', 'GET reads it back');
is(lg('GET', "/assistants/$id", undef, %bob)->{status}, 404,
   'another owner does not see it');
is(lg('GET', "/assistants/$id")->{status}, 401, 'nor does a request with '
   . 'no owner');

# a graph the location does not serve; a taken id
is(lg('POST', '/assistants', { graph_id => 'hidden' }, %ann)->{status}, 404,
   'a graph outside agent_assistants is not found');
is(lg('POST', '/assistants', { graph_id => 'nope' }, %ann)->{status}, 404,
   'nor an unknown one');
is(lg('POST', '/assistants', { name => 'x' }, %ann)->{status}, 422,
   'graph_id is required');
is(lg('POST', '/assistants', { graph_id => 'chat', config => [] },
      %ann)->{status}, 422, 'config must be an object');
is(lg('POST', '/assistants', { graph_id => 'chat', assistant_id => $id },
      %ann)->{status}, 409, 'a taken id: 409');
$r = lg('POST', '/assistants', { graph_id => 'chat', assistant_id => $id,
    if_exists => 'do_nothing' }, %ann);
is($r->{status}, 200, 'if_exists do_nothing: the one there');
is($r->{json}{name}, 'woof', '... unchanged');
$r = lg('POST', '/assistants', { graph_id => 'chat',
    assistant_id => 'my-assistant' }, %ann);
is($r->{json}{assistant_id}, 'my-assistant', 'an id a client gives');
# ids are per owner (t/access_ids_per_owner.t): another owner makes one
# of his own
is(lg('POST', '/assistants', { graph_id => 'chat',
    assistant_id => 'my-assistant' }, %bob)->{status}, 200,
   'an id another owner has: his own');
is(lg('DELETE', '/assistants/my-assistant', undef, %bob)->{status}, 204,
   '... deleted by him');
is(lg('GET', '/assistants/my-assistant', undef, %ann)->{status}, 200,
   '... the first owner\'s kept');

# each update a version: metadata merged, the rest kept
$r = lg('PATCH', "/assistants/$id", { metadata => { size => 2,
    'a longer key' => 'blue' }, description => 'bar' }, %ann);
is($r->{status}, 200, 'PATCH updates it');
is($r->{json}{version}, 2, 'as version 2');
is_deeply($r->{json}{metadata}, { team => 'a', size => 2,
          'a longer key' => 'blue' }, 'metadata merged into its own');
is($r->{json}{description}, 'bar', 'the field given changed');
is_deeply($r->{json}{config}, { configurable => { model => 'mock' } },
          'the others kept');
is(lg('PATCH', "/assistants/$id", { graph_id => 'hidden' }, %ann)->{status},
   404, 'moved to a graph the location does not serve: 404');
$r = lg('PATCH', "/assistants/$id", { config => { configurable => {} } },
        %ann);
is($r->{json}{version}, 3, 'version 3');

$r = lg('POST', "/assistants/$id/versions", {}, %ann);
is_deeply([ map { $_->{version} } @{ $r->{json} } ], [ 3, 2, 1 ],
          'versions, newest first');
is($r->{json}[2]{description}, 'foo', 'each with its own fields');
$r = lg('POST', "/assistants/$id/versions", { limit => 1, offset => 1 },
        %ann);
is_deeply([ map { $_->{version} } @{ $r->{json} } ], [ 2 ], 'a page');
$r = lg('POST', "/assistants/$id/versions",
        { metadata => { size => 2 } }, %ann);
is_deeply([ map { $_->{version} } @{ $r->{json} } ], [ 3, 2 ],
          'filtered by their metadata');
is(lg('POST', "/assistants/$id/versions", {}, %bob)->{status}, 404,
   'not another owner\'s');

$r = lg('POST', "/assistants/$id/latest", { version => 1 }, %ann);
is($r->{json}{version}, 1, 'version 1 made the latest');
is(lg('GET', "/assistants/$id", undef, %ann)->{json}{description}, 'foo',
   'GET reads version 1 now');
$r = lg('PATCH', "/assistants/$id", {}, %ann);
is($r->{json}{version}, 4, 'an update after it is version 4');
is($r->{json}{description}, 'foo', '... of version 1');
is(lg('POST', "/assistants/$id/latest", { version => 9 }, %ann)->{status},
   404, 'no such version: 404');
is(lg('POST', "/assistants/$id/latest", { version => 'x' }, %ann)->{status},
   422, 'a version is a number');

# search and count, with the graphs' own
$r = lg('POST', '/assistants/search', { limit => 100 }, %ann);
my @names = map { $_->{name} } @{ $r->{json} };
is_deeply([ sort @names ], [ sort qw(woof chat chat other) ],
          'search: the owner\'s and the graphs\' own') or diag("@names");
$r = lg('POST', '/assistants/search', { graph_id => 'other' }, %ann);
is(scalar @{ $r->{json} }, 1, 'by graph');
$r = lg('POST', '/assistants/search', { name => 'OO' }, %ann);
is_deeply([ map { $_->{name} } @{ $r->{json} } ], [ 'woof' ],
          'by a part of the name, any case');
$r = lg('POST', '/assistants/search',
        { metadata => { created_by => 'system' } }, %ann);
is_deeply([ sort map { $_->{graph_id} } @{ $r->{json} } ],
          [ 'chat', 'other' ], 'by metadata: the graphs\' own');
$r = lg('POST', '/assistants/search', { metadata => { team => 'a' } },
        %ann);
is_deeply([ map { $_->{assistant_id} } @{ $r->{json} } ], [ $id ],
          'by metadata: the owner\'s');
$r = lg('POST', '/assistants/search', { limit => 1, offset => 1 }, %ann);
is(scalar @{ $r->{json} }, 1, 'a page');
is(lg('POST', '/assistants/count', {}, %ann)->{json}, 4, 'count');
is(lg('POST', '/assistants/count', {}, %bob)->{json}, 2,
   'another owner counts the graphs\' own only');

# a run on it
my $th = lg('POST', '/threads', {}, %ann)->{json}{thread_id};
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => $id,
    input => { messages => [ { role => 'user', content => 'hi' } ] } },
    %ann);
is($r->{status}, 200, 'a run on the assistant');
is($r->{json}{messages}[-1]{content}, 'Hello from the mock', 'answers');
$r = lg('GET', "/threads/$th/runs", undef, %ann);
is($r->{json}[0]{assistant_id}, $id, 'the run names the assistant');
is(lg('GET', "/threads/$th/state", undef, %ann)->{json}{values}{tone},
   'dry', 'its context wrote the graph\'s channel');
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => $id,
    input => { tone => 'warm',
               messages => [ { role => 'user', content => 'hi' } ] } },
    %ann);
is(lg('GET', "/threads/$th/state", undef, %ann)->{json}{values}{tone},
   'warm', 'the run\'s input wins over it');
is(lg('POST', "/threads/$th/runs/wait", { assistant_id => 'my-nothing',
    input => {} }, %ann)->{status}, 404, 'an unknown one: 404');

# its graph as LangGraph draws it
$r = lg('GET', "/assistants/$id/graph", undef, %ann);
is($r->{status}, 200, 'GET /assistants/{id}/graph');
is_deeply([ map { "$_->{id}:$_->{type}" } @{ $r->{json}{nodes} } ],
          [ '__start__:schema', 'model:runnable', '__end__:schema' ],
          'its nodes');
is($r->{json}{nodes}[1]{data}{name}, 'model', 'a node names itself');
is_deeply([ map { "$_->{source}>$_->{target}" } @{ $r->{json}{edges} } ],
          [ '__start__>model', 'model>__end__' ], 'its edges');
is(lg('GET', "/assistants/nope/graph", undef, %ann)->{status}, 404,
   'an unknown assistant\'s graph');

# its subgraphs: none (no node kind runs a graph of its own yet)
$r = lg('GET', "/assistants/$id/subgraphs?recurse=true", undef, %ann);
is($r->{status}, 200, 'GET /assistants/{id}/subgraphs');
is_deeply($r->{json}, {}, '... none');
is(lg('GET', "/assistants/nope/subgraphs", undef, %ann)->{status}, 404,
   'an unknown assistant\'s subgraphs');

# its schemas, from the graph's channels
$r = lg('GET', "/assistants/$id/schemas", undef, %ann);
is($r->{status}, 200, 'GET /assistants/{id}/schemas');
is($r->{json}{state_schema}{properties}{messages}{type}, 'array',
   'the state: messages, an array');
ok(exists $r->{json}{state_schema}{properties}{tone}, '... and tone');
my $ctx = $r->{json}{context_schema}{properties};
ok(exists $ctx->{tone} && !exists $ctx->{messages},
   'the context: the channels but messages');
is($r->{json}{config_schema}{properties}{model}{type}, 'string',
   'the config: a model');
is($r->{json}{input_schema}{'$schema'},
   'http://json-schema.org/draft-07/schema#', 'draft-07');

# gone
is(lg('DELETE', "/assistants/$id", undef, %bob)->{status}, 404,
   'another owner cannot delete it');
is(lg('DELETE', "/assistants/$id", undef, %ann)->{status}, 204, 'DELETE');
is(lg('GET', "/assistants/$id", undef, %ann)->{status}, 404, 'gone');
is(lg('POST', "/assistants/$id/versions", {}, %ann)->{status}, 404,
   'with its versions');
# deleted with its threads
my $b = lg('POST', '/assistants', { graph_id => 'chat' }, %ann)->{json};
my $tb = lg('POST', '/threads', {}, %ann)->{json}{thread_id};
lg('POST', "/threads/$tb/runs/wait", { assistant_id => $b->{assistant_id},
    input => { messages => [ { role => 'user', content => 'hi' } ] } },
    %ann);
my $keep = lg('POST', '/threads', {}, %ann)->{json}{thread_id};
is(lg('DELETE', "/assistants/$b->{assistant_id}?delete_threads=true", undef,
      %ann)->{status}, 204, 'DELETE ?delete_threads=true');
is(lg('GET', "/threads/$tb", undef, %ann)->{status}, 404,
   'its threads are gone');
is(lg('GET', "/threads/$keep", undef, %ann)->{status}, 200,
   'others are not');

my $own = lg('POST', '/assistants/search', { graph_id => 'chat',
    metadata => { created_by => 'system' } }, %ann)->{json}[0]{assistant_id};
is(lg('DELETE', "/assistants/$own", undef, %ann)->{status}, 409,
   'a graph\'s own cannot be deleted');
is(lg('PATCH', "/assistants/$own", {}, %ann)->{status}, 409,
   'nor changed');

# --- configurable channels, types and enums ---------------------------------

$r = lg('GET', "/assistants/$own/schemas", undef, %ann)->{json};
is_deeply($r->{config_schema}{properties}{level},
          { type => 'integer', default => 1 },
          'a config=on channel is in the config schema, with its type');
ok(!exists $r->{config_schema}{properties}{tone}, '... the others are not');
is($r->{config_schema}{properties}{model}{type}, 'string',
   '... nor is the model taken');
is_deeply($r->{state_schema}{properties}{mood},
          { type => 'string', enum => [ 'calm', 'sad' ] }, 'an enum');
my $msgs = $r->{state_schema}{properties}{messages};
is($msgs->{langgraph_type}, 'messages', 'messages said as LangGraph JS does');
my ($ref) = $msgs->{items}{'$ref'} =~ m{^#/definitions/(.+)};
ok($ref && $r->{state_schema}{definitions}{$ref}, '... with its definition');
is_deeply(lg('GET', "/assistants/$own", undef, %ann)->{json}{config},
          { configurable => { level => 1 } },
          'the graph\'s own assistant: the defaults of its config channels');

my $in = { messages => [ { role => 'user', content => 'hi' } ] };
my $tc = lg('POST', '/threads', {}, %ann)->{json}{thread_id};
$r = lg('POST', "/threads/$tc/runs/wait", { assistant_id => 'chat',
    input => $in, config => { configurable => { level => 5, tone => 'x' } } },
    %ann);
is($r->{json}{level}, 5, 'a run\'s config.configurable writes the channel');
ok(!defined $r->{json}{tone}, '... only a config=on one');
my $c = lg('POST', '/assistants', { graph_id => 'chat',
    config => { configurable => { level => 7 } } }, %ann)->{json};
$r = lg('POST', "/threads/$tc/runs/wait", { assistant_id =>
    $c->{assistant_id}, input => $in }, %ann);
is($r->{json}{level}, 7, 'an assistant\'s config too');
$r = lg('POST', "/threads/$tc/runs/wait", { assistant_id =>
    $c->{assistant_id}, input => $in,
    config => { configurable => { level => 8 } } }, %ann);
is($r->{json}{level}, 8, '... under the run\'s');
$r = lg('POST', "/threads/$tc/runs/wait", { assistant_id =>
    $c->{assistant_id}, input => { %$in, level => 9 },
    config => { configurable => { level => 8 } } }, %ann);
is($r->{json}{level}, 9, '... and the input over both');

done_testing;
