#!/usr/bin/perl
# The demo's scripted model: it speaks the OpenAI streaming protocol, asks
# for one SQL query, then answers from the query's result, word by word.

use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../../t/lib";
use MockLLM;
use JSON::PP;

my ($dir, $portfile) = @ARGV;

my $mock = MockLLM->new(dir => $dir, script => sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];

    if ($last->{role} eq 'user') {
        return { tools => [[ 'call_1', 'execute_sql_query', encode_json({
            query => 'SELECT Department, ROUND(AVG(Salary)) AS avg_salary, '
                   . 'COUNT(*) AS people FROM csv_data GROUP BY Department '
                   . 'ORDER BY avg_salary DESC' }) ]] };
    }

    my $res = decode_json($last->{content});
    return { text => "Could not run the query: $res->{error}" }
        if $res->{error};

    my $text = "Average salary by department: "
        . join('; ', map { "$_->[0] $_->[1] ($_->[2] people)" }
                     @{ $res->{rows} })
        . ". $res->{rows}[0][0] pays the most.";
    return { text => $text, delay => 0.05 };
});

open my $fh, '>', $portfile or die $!;
print $fh $mock->port, "\n", $mock->{pid}, "\n";
close $fh;

# the mock serves in its own process; this one is done
$mock->{pid} = undef;
