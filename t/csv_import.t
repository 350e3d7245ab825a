#!/usr/bin/perl
# CSV import edge cases: long REAL values parsed whole, empty and
# duplicate header names given names of their own, odd names quoted.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Time::HiRes qw(time);

my $t = AgentTest->new;
$t->mock(sub { { text => 'unused' } });
$t->run;

my $sid = $t->session;

sub upload {
    my ($name, $csv) = @_;
    return $t->http('POST', "/api/sessions/$sid/resources?name=$name", $csv,
                    'Content-Type' => 'text/csv');
}

sub cell {
    my ($sql) = @_;
    my ($table) = $sql =~ /FROM (\w+)/;
    my $file = $t->sqlite($t->dir . '/agent.db',
                          "SELECT path FROM resources WHERE name = "
                          . "'$table.csv'");
    return $t->sqlite($file, $sql);
}

# 70 digits and an exponent: cut at 63 characters the exponent is lost
my $long = '0.' . ('1234567890' x 7) . 'e5';
my $r = upload('real.csv', "x,y\n$long,1.5\n2.25e-300,2\n");
is($r->{status}, 201, 'long REAL values: 201');
is($r->{json}{columns}[0]{type}, 'REAL', 'x is REAL');
like(cell('SELECT x FROM real WHERE y = 1.5'), qr/^12345\.678901234/,
     'the exponent of a 75-character value is kept');
like(cell('SELECT x FROM real WHERE y = 2'), qr/^2\.25e-300$/i,
     'a tiny value round-trips');

# an empty header name, twice, and a duplicate
$r = upload('holes.csv', "a,,c,,A\n1,2,3,4,5\n");
is($r->{status}, 201, 'empty and duplicate header names: 201')
    or diag($r->{content});
my @names = map { $_->{name} } @{ $r->{json}{columns} // [] };
is(scalar @names, 5, 'five columns');
is(scalar(keys %{ { map { lc($_) => 1 } @names } }), 5,
   'every name is unique: ' . join(', ', @names));
ok(!(grep { $_ eq '' } @names), 'no empty name');

# a generated name that a given one already has
$r = upload('clash.csv', "column_2,,a_2,a\n1,2,3,4\n");
is($r->{status}, 201, 'generated names never clash with given ones')
    or diag($r->{content});
@names = map { $_->{name} } @{ $r->{json}{columns} // [] };
is(scalar(keys %{ { map { lc($_) => 1 } @names } }), 4,
   'unique: ' . join(', ', @names));

# names that need quoting as SQL identifiers
$r = upload('odd.csv', qq{"we""ird",sp ace,"semi;colon",select\n1,2,3,4\n});
is($r->{status}, 201, 'odd header names: 201') or diag($r->{content});
is(cell('SELECT "we""ird" + "sp ace" + "semi;colon" + "select" FROM odd'),
   10, 'odd names are columns');

# found by the fuzzer: NUL bytes in header names made names that compared
# equal when they were not, and a naming loop that ran for seconds
my $t0 = time;
$r = upload('nul.csv', "J\0\0\0 \xff,J\0\0\0 \xff,J\0x,J\0y,,,\n1,2,3,4,5,6,7\n");
is($r->{status}, 201, 'NUL bytes in header names: 201') or diag($r->{content});
ok(time - $t0 < 2, 'at once');
@names = map { $_->{name} } @{ $r->{json}{columns} // [] };
ok(!(grep { /\0/ } @names), 'no NUL in a column name');
is(scalar(keys %{ { map { lc($_) => 1 } @names } }), 7, 'seven unique names');

my $dup = join(',', ('a') x 300) . "\n" . join(',', (1) x 300) . "\n";
$t0 = time;
$r = upload('dups.csv', $dup);
is($r->{status}, 201, '300 columns of one name: 201');
ok(time - $t0 < 5, 'named in time');

# a header only
$r = upload('empty.csv', "a,b\n");
ok($r->{status} == 201 || $r->{status} == 400, 'a header without rows');

$t->stop;
$t->check_log;
done_testing;
