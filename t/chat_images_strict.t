#!/usr/bin/perl
# Images are checked before anything is stored: strict base64 and magic
# bytes that match the declared type, refused with 400 naming the image
# before anything is stored or sent, the session still good after.  Number
# literals of if=: a malformed or too long one fails nginx -t.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MIME::Base64;

my $t = AgentTest->new;
my $root = AgentTest->root;

# --- A: images --------------------------------------------------------

my $mock = $t->mock(sub { { text => 'Seen.' } });
$t->run($t->conf(location => 'client_max_body_size 16m;'));

my $sid = $t->session(title => 'images');

my $png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk'
        . '+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
my $gif = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
my $jpeg = encode_base64("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00"
                         . "\x00\x01\x00\x01\x00\x00\xff\xd9", '');
my $webp = encode_base64("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00"
                         . "\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88"
                         . "\xfe\x07\x00", '');
my $wave = encode_base64("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00", '');
my $noise = encode_base64(join('', map { chr(($_ * 37 + 11) % 256) }
                                   1 .. 48), '');

my $img = sub { { mime_type => $_[0], data => $_[1] } };

sub stored {
    my $m = $t->http('GET', "/api/sessions/$sid/messages")->{json};
    return scalar @{ $m->{messages} // [] };
}

my $r = $t->turn($sid, 'Hello');
is($r->{events}[-1]{type}, 'end', 'a first plain turn');
my $before = () = $mock->requests;
my $rows = stored();

# before this change: each was taken (200 and a turn) or refused with a
# message that did not name the image
my @bad = (
    [ 'a byte outside the alphabet',
      [ $img->('image/png', $png), $img->('image/png', 'iVBORw0KGgo*') ],
      qr/^images\[1\]: the "data" of an image must be base64, without a data: prefix or spaces \(byte 11 is not base64\)$/ ],
    [ 'a newline inside',
      [ $img->('image/png', "iVBORw0K\nGgo=") ],
      qr/^images\[0\]: .*must be base64.*\(byte 8 is not base64\)$/ ],
    [ 'a missing padding',
      [ $img->('image/png', 'iVBORw0KGgo') ],
      qr/^images\[0\]: the "data" is not valid base64: its length, 11, is not a multiple of 4/ ],
    [ 'a padding inside',
      [ $img->('image/png', 'iVBO=w0KGgo=') ],
      qr/^images\[0\]: the "data" is not valid base64: "=" only pads its end, at most twice \(byte 4\)$/ ],
    [ 'three "="',
      [ $img->('image/png', 'iVBORw0KG===') ],
      qr/^images\[0\]: .*"=" only pads its end/ ],
    [ 'a png declared, jpeg bytes',
      [ $img->('image/png', $jpeg) ],
      qr/^images\[0\] is declared image\/png, but its data is a JPEG image: declare it image\/jpeg$/ ],
    [ 'random bytes declared gif',
      [ $img->('image/gif', $gif), $img->('image/gif', $noise) ],
      qr/^images\[1\] is declared image\/gif, but its data is not a PNG, JPEG, WebP or GIF image$/ ],
    [ 'a webp with RIFF but not WEBP',
      [ $img->('image/webp', $wave) ],
      qr/^images\[0\] is declared image\/webp, but its data is not a PNG/ ],
    [ 'a gif of 4 bytes',
      [ $img->('image/gif', encode_base64('GIF8', '')) ],
      qr/^images\[0\] is declared image\/gif, but its data is not/ ],
);

for my $c (@bad) {
    my $r = $t->http('POST', "/api/chat/$sid/message",
                     { message => 'look', images => $c->[1] });
    my $err = $r->{json}{error} // '';
    ok($r->{status} == 400 && $err =~ $c->[2],
       "$c->[0]: 400, the image named and what is wrong")
        or diag "$r->{status} $r->{content}";
}

is(scalar(() = $mock->requests), $before, 'none of them sent upstream');
is(stored(), $rows, 'none of them stored');

$r = $t->turn($sid, 'And now?');
is($r->{events}[-1]{type}, 'end', 'a plain turn after them still works');
my @req = $mock->requests;
is(scalar @req, $before + 1, '... one call');
ok(!grep({ ref $_->{content} } @{ $req[-1]{body}{messages} }),
   '... with no image in its history');

# the four types, correct: taken and sent
for my $c ([ 'image/png', $png ], [ 'image/jpeg', $jpeg ],
           [ 'image/webp', $webp ], [ 'image/gif', $gif ])
{
    my $r = $t->turn($sid, { message => 'look',
                             images => [ $img->(@$c) ] });
    is($r->{events}[-1]{type}, 'end', "$c->[0]: taken");
    my $parts = ($mock->requests)[-1]{body}{messages}[-1]{content};
    is(ref $parts && $parts->[1]{image_url}{url},
       "data:$c->[0];base64,$c->[1]", "$c->[0]: sent");
}

$r = $t->turn($sid, 'Last one');
is($r->{events}[-1]{type}, 'end', 'a plain turn after the images');
$t->stop;

# --- B: number literals of if= ----------------------------------------

my $g = AgentTest->new;
mkdir $g->dir . '/prompts';
system('cp', "$root/prompts/react_system.md", $g->dir . '/prompts/') == 0
    or die;

sub conf_test {
    my ($cond) = @_;
    $g->write_conf($g->conf(http => "agent_prompts %%DIR%%/prompts;\n"
        . "agent_graph g {\n    channel a value;\n"
        . "    node one template text=x;\n    edge START one;\n"
        . "    edge one one \"if=$cond\";\n    edge one END;\n}\n"));
    return $g->test_conf;
}

my $long = '1234567890' x 7;

# before this change: each passed nginx -t (read as 1.2, 0, 1, 12.5) or
# failed with 'unexpected "e"' and not these words
for my $c ([ 'a == 1.2.3', qr/the number "1\.2\.3" is malformed/ ],
           [ "a < $long", qr/the number "$long" has more than 30 digits/ ],
           [ 'a < 1' . '0' x 30, qr/the number "10{30}" has more than 30/ ],
           [ 'a > 1e', qr/the number "1e" is malformed/ ],
           [ 'a > 2e3', qr/the number "2e3" is malformed/ ],
           [ 'a == 12abc', qr/the number "12abc" is malformed/ ],
           [ 'a == 1.', qr/the number "1\." is malformed/ ],
           [ 'a == -.5', qr/the number "-\.5" is malformed/ ],
           [ '12.5.0 == a', qr/the number "12\.5\.0" is malformed/ ])
{
    my ($ok, $out) = conf_test($c->[0]);
    ok(!$ok && $out =~ /does not parse: $c->[1]/
           && $out =~ /in \S+nginx\.conf:\d+\n/,
       "if=$c->[0]: nginx -t fails, naming the literal") or diag $out;
}

for my $c ('a == 1.5', 'a < 10', 'a > -3', 'a == 0.25 || a == 007',
           '(a<1)&&a>=-2', 'a < 1' . '0' x 29, '-1 < a')
{
    my ($ok, $out) = conf_test($c);
    ok($ok, "if=$c: accepted") or diag $out;
}

# a location without agent_owner on a store that others serve with owners
{
    my $o = AgentTest->new;
    my $mixed = $o->conf(location => 'agent_owner $http_x_user;');
    $o->write_conf($mixed);
    my ($ok, $out) = $o->test_conf;
    ok($ok, 'a location without agent_owner: accepted');
    like($out, qr/\[warn\].*agent_owner: location "\/api\/sessions\/" has none while other locations on the same agent_checkpoint_db have one/,
         'nginx -t warns of a location that sees every owner\'s sessions');
    my $all = $o->conf(http => 'agent_owner $http_x_user;');
    $o->write_conf($all);
    ($ok, $out) = $o->test_conf;
    unlike($out, qr/agent_owner: location/, 'owners everywhere: no warning');
}

done_testing;
