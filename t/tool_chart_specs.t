#!/usr/bin/perl
# A Vega-Lite spec from ask_analyst is data, never code: the module writes
# it anew from an allow-list (ngx_http_agent_vega.c).  usermeta (and with
# it vega-embed's embedOptions: actions, a sourceHeader that runs as
# script), href, a config that is a string (a URL) and a $schema that is
# not Vega-Lite's are dropped at every depth; a url anywhere (data,
# lookup data, an image's url channel) or an image mark refuses the spec,
# and the model is asked to fix it.  The event and the stored history carry
# the cleaned spec; the rows of data.values are kept as they are.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;

my $hostile = {
    '$schema' => 'https://vega.github.io/schema/vega-lite/v5.json',
    usermeta => { embedOptions => {
        actions => JSON::PP::true,
        sourceHeader => '<script>window.__pwned=1</script>',
        config => 'http://127.0.0.1:1/evil.json' } },
    config => { axis => { labelColor => 'red' } },
    data => { values => [ { city => 'Oslo', url => 'http://x/', n => 7,
                            href => 'javascript:alert(1)' } ] },
    mark => { type => 'bar', href => 'javascript:alert(2)' },
    encoding => {
        x => { field => 'city', type => 'nominal' },
        y => { field => 'n', type => 'quantitative' },
        href => { field => 'url' },
        tooltip => { field => 'n', usermeta => { x => 1 } },
    },
    layer => [ { mark => 'rule', usermeta => { y => 2 },
                 encoding => { href => { value => 'https://elsewhere/' } } } ],
    patch => 'http://127.0.0.1:1/patch.json',
};
my $clean = {
    '$schema' => 'https://vega.github.io/schema/vega-lite/v5.json',
    config => { axis => { labelColor => 'red' } },
    data => { values => [ { city => 'Oslo', url => 'http://x/', n => 7,
                            href => 'javascript:alert(1)' } ] },
    mark => { type => 'bar' },
    encoding => {
        x => { field => 'city', type => 'nominal' },
        y => { field => 'n', type => 'quantitative' },
        tooltip => { field => 'n' },
    },
    layer => [ { mark => 'rule', encoding => {} } ],
};

my %refused = (
    'data url' => { mark => 'bar', data => { url => 'https://elsewhere/x.csv' } },
    'lookup url' => { mark => 'bar', data => { values => [] },
                      transform => [ { lookup => 'id', from => {
                          data => { url => 'https://elsewhere/y.json' },
                          key => 'id' } } ] },
    'image mark' => { mark => 'image', data => { values => [] } },
    'url channel' => { mark => 'point', data => { values => [] },
                       encoding => { url => { field => 'u' } } },
    'image mark object' => { mark => { type => 'image' },
                             data => { values => [] } },
    'layered image' => { data => { values => [] },
                         layer => [ { mark => { type => 'IMAGE' } } ] },
);
my $again = { '$schema' => 'https://vega.github.io/schema/vega/v5.json',
              config => 'https://elsewhere/config.json', mark => 'bar',
              data => { values => [] } };
my $fixed = { mark => 'point', data => { values => [ { a => 1 } ] } };

my $mock = $t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $q = AgentTest::last_user($req);

    if ($m[0]{content} =~ /^You write a Vega-Lite|^You fix JSON/) {
        return { text => encode_json($fixed) }
            if $q =~ /^This is not a valid chart specification/;
        return { text => encode_json($again) } if $q =~ /again/;
        return { text => encode_json($hostile) } if $q =~ /hostile/;
        my ($k) = $q =~ /chart: (.+)$/;
        return { text => encode_json($refused{$k} // {}) };
    }

    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my ($result) = grep { $_->{role} eq 'tool' } @m[$u + 1 .. $#m];
    return { text => 'drawn' } if $result;
    return { tools => [ [ 'c1', 'ask_analyst', encode_json({ query => $q }) ] ] };
});

$t->run($t->graph_conf('sql_assistant'));
my $sid = $t->session;

sub result {
    my ($r) = @_;
    my ($res) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
    return $res ? $res->{content} : {};
}

my $r = $t->turn($sid, 'a hostile chart');
is(result($r)->{type}, 'vega_lite_spec', 'a spec with hostile keys is drawn');
is_deeply(result($r)->{spec}, $clean,
          'usermeta, href, patch dropped at every depth; rows kept')
    or diag(explain result($r)->{spec});

my $msgs = $t->http('GET', "/api/sessions/$sid/messages?include_tools=1");
my ($stored) = grep { $_->{role} eq 'tool' } @{ $msgs->{json}{messages} };
my $content = ref $stored->{content} ? $stored->{content}
                                     : decode_json($stored->{content});
is_deeply($content->{spec}, $clean, 'the history holds the cleaned spec');
unlike($msgs->{content}, qr/usermeta|sourceHeader|__pwned|patch\.json/,
       'nothing of the hostile keys in the history');

# a config that is a URL, a $schema that is not Vega-Lite's
$r = $t->turn($sid, 'a hostile chart again');
is_deeply(result($r)->{spec}, { mark => 'bar', data => { values => [] } },
          'a string config and a Vega $schema dropped');

for my $k (sort keys %refused) {
    my $before = scalar $mock->requests;
    $r = $t->turn($sid, "chart: $k");
    is_deeply(result($r)->{spec}, $fixed, "$k: refused, then fixed");
    my @asked = grep { AgentTest::last_user($_->{body})
                       =~ /^This is not a valid chart specification/ }
                ($mock->requests)[$before .. scalar($mock->requests) - 1];
    like(@asked ? AgentTest::last_user($asked[0]{body}) : '',
         $k =~ /image/ ? qr/image marks are not allowed/
                       : qr/data from a url is not allowed/,
         "$k: the model is told why");
}

$t->check_log;
done_testing;
