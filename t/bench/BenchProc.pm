# The benchmarks' processes: free loopback ports, servers spawned in their
# own process groups and stopped by id (all of them at exit), the load
# generator run and its JSON read.  Used by run.pl and scale.pl.

package BenchProc;

use strict;
use warnings;
use Exporter 'import';
use FindBin;
use IO::Socket::INET;
use JSON::PP;
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep);

our @EXPORT = qw(note free_port spawn wait_port stop loadgen tree);

my $bench = $FindBin::Bin;
my @procs;

sub note { print STDERR "bench: @_\n" }

sub free_port {
    my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                  Listen => 1) or die $!;
    my $p = $s->sockport;
    close $s;
    return $p;
}

sub spawn {
    my ($log, %env) = @_;
    my @cmd = @{ delete $env{cmd} };
    my $dir = delete $env{dir};
    my $pid = fork();
    die "fork: $!" unless defined $pid;
    if ($pid == 0) {
        chdir $dir or die "$dir: $!" if $dir;
        # its own process group: stop() ends its children too
        setpgrp(0, 0);
        $ENV{$_} = $env{$_} for keys %env;
        open STDOUT, '>', $log or die;
        open STDERR, '>&', \*STDOUT;
        exec 'sh', '-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; '
                         . 'exec "$@"', 'sh', @cmd;
        exit 1;
    }
    push @procs, $pid;
    return $pid;
}

sub wait_port {
    my ($port, $secs) = @_;
    for (1 .. ($secs // 10) * 20) {
        my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                      PeerPort => $port);
        return 1 if $s;
        sleep 0.05;
    }
    die "nothing listens on $port";
}

sub stop {
    my ($pid) = @_;
    return unless $pid;
    # the process and its children (spawn() made it a group's leader)
    kill 'TERM', -$pid;
    for (1 .. 100) {
        return if waitpid($pid, WNOHANG) == $pid;
        sleep 0.05;
    }
    kill 'KILL', -$pid;
    waitpid($pid, 0);
}

END { local $?; stop($_) for @procs }

sub loadgen {
    my ($mode, %o) = @_;
    my $arg = encode_json(\%o);
    my $out = `sh -c 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec node "\$@"' sh $bench/loadgen.js $mode '$arg'`;
    my ($line) = grep { /^\{/ } split /\n/, $out;
    die "loadgen $mode failed: $out" unless $line;
    return decode_json($line);
}

# a process and all its descendants, by id
sub tree {
    my @all = @_;
    for (my $i = 0; $i < @all; $i++) {
        push @all, grep { /^\d+$/ } map { s/\s//gr }
                   `ps -o pid= --ppid $all[$i]`;
    }
    return \@all;
}

1;
