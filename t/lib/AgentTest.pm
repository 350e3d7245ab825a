package AgentTest;

# The test harness: a temp dir per test file, nginx (master and 2 workers)
# with the module on a free loopback port, a config from the test's heredoc,
# a scripted LLM mock, and clients for JSON endpoints and event streams.
# Whatever it starts it stops by pid, even when the test dies.

use strict;
use warnings;

use Test::More;
use File::Temp qw(tempdir);
use File::Basename qw(dirname);
use File::Spec;
use IO::Socket::INET;
use IO::Select;
use Socket qw(IPPROTO_TCP TCP_NODELAY);
use HTTP::Tiny;
use JSON::PP;
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);
use Cwd qw(abs_path);
use Digest::MD5 qw(md5_hex);

use lib dirname(__FILE__);
use MockLLM;

use Exporter 'import';
our @EXPORT = qw(decode_json encode_json);

my $root = abs_path(dirname(__FILE__) . '/../..');
our $MODULE = $ENV{AGENT_MODULE}
    // "$root/build/nginx/objs/ngx_http_agent_module.so";
our $NGINX = $ENV{NGINX_BINARY} // '/usr/sbin/nginx';

my @instances;

sub new {
    my ($class, %args) = @_;
    my $dir = tempdir('agent-test-XXXXXX', TMPDIR => 1,
                      CLEANUP => !$ENV{TEST_KEEP});
    chmod 0755, $dir;
    my $self = bless { dir => $dir, port => free_port(), %args }, $class;
    push @instances, $self;
    diag("test dir: $dir") if $ENV{TEST_KEEP};
    return $self;
}

sub dir { $_[0]->{dir} }
sub port { $_[0]->{port} }
sub root { $root }

sub free_port {
    my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                  Listen => 1, ReuseAddr => 1) or die $!;
    my $p = $s->sockport;
    close $s;
    return $p;
}

# an npm client of a test's in build/NAME (want: the package that says
# it is there), installed once; the test skipped where the registry is
# out of reach
sub npm {
    my ($name, $want, @packages) = @_;
    my $dir = npm_install($name, $want, @packages);

    plan(skip_all => "$want (npm) is not installable here") unless $dir;

    return $dir;
}

# the same, for a part of a test: its folder, or undef (then skip that)
sub npm_install {
    my ($name, $want, @packages) = @_;
    my $dir = "$root/build/$name";

    if (!-d "$dir/node_modules/$want") {
        system('sh', '-c', "mkdir -p $dir && npm install --prefix $dir "
               . "@packages --no-audit --no-fund --loglevel=error "
               . '>/dev/null 2>&1');
    }

    return -d "$dir/node_modules/$want" ? $dir : undef;
}

# what an npm client script saw: node SCRIPT ARGS..., one JSON line an
# observation {"k", "v"}, gathered by k (its __died__ said); killed after
# five minutes
sub observe {
    my (@cmd) = @_;
    my %o;

    open my $fh, '-|', 'timeout', '300', 'node', @cmd or die "node: $!";

    while (my $line = <$fh>) {
        my $v = eval { decode_json($line) } or do { diag($line); next };
        $o{$v->{k}} = $v->{v};
    }

    close $fh;
    diag($o{__died__}) if $o{__died__};

    return %o;
}

sub mock {
    my ($self, $script, %opt) = @_;
    $self->{mock}->stop if $self->{mock};
    $self->{mock} = MockLLM->new(dir => $self->{dir}, script => $script,
                                 %opt);
    return $self->{mock};
}

# the test's config with %%NAME%% filled in; "user" set for the test run
sub write_conf {
    my ($self, $conf) = @_;
    my %v = (
        DIR => $self->{dir},
        PORT => $self->{port},
        MOCK => $self->{mock} ? $self->{mock}->port : 1,
        MODULE => $MODULE,
        ROOT => $root,
        USER => ($> == 0 ? 'user root;' : ''),
    );
    $conf =~ s/%%(\w+)%%/$v{$1} \/\/ die "no value for $1"/ge;

    # make test-pg: the same store on PostgreSQL, a database per file
    # a path becomes the test server's database; a URL a test wrote stays
    $conf =~ s{agent_checkpoint_db\s+(?!"?postgres)([^\s;]+)}
              {'agent_checkpoint_db ' . pg_url($1)}ge if $ENV{AGENT_PG};

    # NGX_AGENT_STORE_DEFER=1 prove ...: SQLite answers later, every pass
    # made again (docs/testing.md); nginx passes it to the workers by env
    $conf =~ s/^(load_module [^\n]*\n)/$1env NGX_AGENT_STORE_DEFER;\n/m
        if $ENV{NGX_AGENT_STORE_DEFER} && $conf !~ /env NGX_AGENT_STORE_DEFER/;

    for my $d (qw(body proxy fastcgi uwsgi scgi)) {
        mkdir "$self->{dir}/$d";
    }

    open my $fh, '>', "$self->{dir}/nginx.conf" or die $!;
    print $fh $conf;
    close $fh;
}

# a graph of conf/graphs/ for both locations, its prompts from prompts/
sub graph_conf {
    my ($self, $graph, %o) = @_;
    # tool_rounds binds the seed's MCP server, declared before it; one
    # that answers nothing unless the test gives its own (mcp => URL)
    my $mcp = $graph eq 'tool_rounds'
        ? "agent_mcp seed url=" . ($o{mcp} // 'http://127.0.0.1:1/mcp')
          . " timeout=5s;\n" : '';
    return $self->conf(%o, http => "agent_prompts $root/prompts;\n$mcp"
        . "include $root/conf/graphs/$graph.conf;\n"
        . "agent_use_graph $graph;\n" . ($o{http} // ''));
}

# the types of the events that are neither node events nor chunks
sub plain {
    my ($r) = @_;
    return [ grep { $_ ne 'node' && $_ ne 'chunk' } @{ $r->{types} } ];
}

# the last user message of a request to the mock
sub last_user {
    my ($req) = @_;
    my ($u) = grep { $_->{role} eq 'user' } reverse @{ $req->{messages} };
    my $c = $u ? $u->{content} : '';
    $c = join ' ', map { $_->{text} // '' } @$c if ref $c;
    return $c;
}

# t/store_pg_hosts.t and t/store_pg_from_sqlite.t's mock: "sum" asks the
# SQL tool for an upload's sum, "slow" streams eight words half a second
# apart, others say the turn
sub sum_script {
    my ($req) = @_;
    my $last = $req->{messages}[-1];
    return { text => "sum: $last->{content}" } if $last->{role} eq 'tool';
    my $q = last_user($req);
    return { tools => [[ 'c1', 'execute_sql_query',
                         '{"query":"SELECT SUM(n) FROM csv_data"}' ]] }
        if $q =~ /^sum/;
    my $users = grep { $_->{role} eq 'user' } @{ $req->{messages} };
    return { text => join(' ', map { "w$_" } 1 .. 8), delay => 0.5 }
        if $q =~ /^slow/;
    return { text => "turn $users: $q" };
}

# the usual http block: the module, the mock as the default model
sub conf {
    my ($self, %o) = @_;
    my $http = $o{http} // '';
    my $loc = $o{location} // '';
    my $user = $o{user} // '%%USER%%';
    my $workers = $o{workers} // 2;

    return <<"CONF";
load_module %%MODULE%%;
$user
worker_processes $workers;
error_log %%DIR%%/error.log info;
pid %%DIR%%/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path %%DIR%%/body;
    proxy_temp_path %%DIR%%/proxy;
    fastcgi_temp_path %%DIR%%/fastcgi;
    uwsgi_temp_path %%DIR%%/uwsgi;
    scgi_temp_path %%DIR%%/scgi;
    agent_checkpoint_db %%DIR%%/agent.db;
    agent_resources_dir %%DIR%%/resources;
    agent_model mock provider=openai url=http://127.0.0.1:%%MOCK%%/v1/chat/completions model=mock-1 alias=default;
    $http
    server {
        listen 127.0.0.1:%%PORT%%;
        location /api/sessions/ { agent_sessions; }
        location /api/chat/ { agent_chat; $loc }
    }
}
CONF
}

sub test_conf {
    my ($self) = @_;
    local $ENV{LD_PRELOAD} = $ENV{AGENT_PRELOAD} if $ENV{AGENT_PRELOAD};
    my $out = `$NGINX -t -p $self->{dir}/ -c $self->{dir}/nginx.conf -e $self->{dir}/error.log 2>&1`;
    return ($? == 0, $out);
}

sub port_free {
    my ($p) = @_;
    my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $p,
                                  Listen => 1, ReuseAddr => 1) or return 0;
    close $s;
    return 1;
}

sub run {
    my ($self, $conf) = @_;

    # the port picked by new() was let go: a mock that listens on port 0
    # since may have been given it; then another one (nothing had it yet)
    $self->{port} = free_port() unless port_free($self->{port});

    $self->write_conf($conf // $self->conf);

    my $pid = fork();
    die "fork: $!" unless defined $pid;

    if ($pid == 0) {
        open STDOUT, '>>', "$self->{dir}/nginx.out";
        open STDERR, '>&', \*STDOUT;
        # make test-asan: the sanitizers' runtimes, for nginx alone
        $ENV{LD_PRELOAD} = $ENV{AGENT_PRELOAD} if $ENV{AGENT_PRELOAD};
        exec $NGINX, '-p', "$self->{dir}/", '-c', "$self->{dir}/nginx.conf",
             '-e', "$self->{dir}/error.log", '-g', 'daemon off;';
        exit 1;
    }

    $self->{nginx} = $pid;

    for (1 .. 100) {
        my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                      PeerPort => $self->{port});
        if ($s) {
            close $s;
            # the master listens before its workers start (it may set a
            # PostgreSQL schema up first): a test may look for them at once.
            # What answered may be another test's nginx, on a port this one
            # let go between two starts: ours is up only once it has workers
            my $exited;
            wait_for(sub {
                return 1 if $self->worker_pids;
                $exited = waitpid($pid, WNOHANG) == $pid;
                return $exited;
            }, 10);
            return $self if !$exited && $self->worker_pids;
            delete $self->{nginx};
            kill 'KILL', $pid unless $exited;
            waitpid($pid, 0) unless $exited;
            die "nginx did not start:\n" . $self->slurp('nginx.out')
                . $self->slurp('error.log');
        }
        if (waitpid($pid, WNOHANG) == $pid) {
            delete $self->{nginx};
            die "nginx did not start:\n" . $self->slurp('nginx.out')
                . $self->slurp('error.log');
        }
        sleep 0.05;
    }

    die "nginx did not listen on $self->{port}";
}

sub stop {
    my ($self) = @_;
    # a master killed on a slow host leaves its workers, still listening:
    # the next start of this test would find them on its port
    my @workers = $self->worker_pids;
    my $pid = delete $self->{nginx} or return;

    kill 'QUIT', $pid;
    for (1 .. 100) {
        return if waitpid($pid, WNOHANG) == $pid;
        sleep 0.05;
    }
    kill 'TERM', $pid;
    for (1 .. 40) {
        if (waitpid($pid, WNOHANG) == $pid) {
            kill 'KILL', @workers;
            return;
        }
        sleep 0.05;
    }
    kill 'KILL', $pid, @workers;
    waitpid($pid, 0);
}

sub stop_all {
    for my $i (@instances) {
        $i->stop;
        $i->{mock}->stop if $i->{mock};
    }
}

END { stop_all() }
$SIG{INT} = $SIG{TERM} = sub { stop_all(); exit 1 };

sub slurp {
    my ($self, $name) = @_;
    open my $fh, '<', "$self->{dir}/$name" or return '';
    local $/;
    my $s = <$fh>;
    return $s;
}

sub worker_pids {
    my ($self) = @_;
    my $master = $self->{nginx} or return ();
    my @pids = `ps -o pid= --ppid $master`;
    chomp @pids;
    s/\s+//g for @pids;
    return grep { /^\d+$/ } @pids;
}

# a request with a JSON body (or raw with a content type); answers
# { status, headers, content, json }
sub http {
    my ($self, $method, $path, $body, %h) = @_;
    my $ua = HTTP::Tiny->new(timeout => 20, keep_alive => 0);
    my %opt = (headers => { %h });

    if (defined $body) {
        $opt{content} = ref $body ? encode_json($body) : $body;
        $opt{headers}{'Content-Type'} //= 'application/json';
    }

    my $res = $ua->request($method, "http://127.0.0.1:$self->{port}$path",
                           \%opt);
    $res->{json} = eval { decode_json($res->{content}) }
        if ($res->{headers}{'content-type'} // '') =~ /json/
           && length $res->{content};
    return $res;
}

sub session {
    my ($self, %body) = @_;
    my $r = $self->http('POST', '/api/sessions/', { %body });
    die "cannot create a session: $r->{status} $r->{content}"
        unless $r->{status} == 201;
    return $r->{json}{id};
}

# a turn: POST and read the event stream event by event.
# opts: stop_after => N (close after N events), timeout => s
sub turn {
    my ($self, $session, $body, %o) = @_;
    $body = { message => $body } unless ref $body;
    return $self->stream("/api/chat/$session/message", encode_json($body),
                         %o);
}

sub stream {
    my ($self, $path, $content, %o) = @_;
    my $timeout = $o{timeout} // 20;
    my $res = { events => [], comments => [], headers => {}, raw => '' };

    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $self->{port}) or die $!;
    setsockopt($s, IPPROTO_TCP, TCP_NODELAY, 1);
    my $extra = join '', map { "$_: $o{headers}{$_}\r\n" }
                         sort keys %{ $o{headers} // {} };
    if (($o{method} // 'POST') eq 'GET') {
        print $s "GET $path HTTP/1.1\r\nHost: localhost\r\n$extra"
                 . "Connection: close\r\n\r\n";
    } else {
        print $s "POST $path HTTP/1.1\r\nHost: localhost\r\n$extra"
                 . "Content-Type: application/json\r\n"
                 . "Content-Length: " . length($content) . "\r\n"
                 . "Connection: close\r\n\r\n$content";
    }

    my $sel = IO::Select->new($s);
    my $deadline = time + $timeout;
    my ($buf, $head_done, $chunked) = ('', 0, 0);
    my $pending = '';

    while (time < $deadline) {
        last unless $sel->can_read($deadline - time);
        my $n = sysread($s, $buf, 65536, length $buf);
        last unless $n;

        if (!$head_done) {
            next unless $buf =~ /\r\n\r\n/;
            my ($head, $rest) = split /\r\n\r\n/, $buf, 2;
            my ($line, @h) = split /\r\n/, $head;
            ($res->{status}) = $line =~ m{^HTTP/1\.\d (\d+)};
            for (@h) {
                my ($k, $v) = split /:\s*/, $_, 2;
                $res->{headers}{lc $k} = $v;
            }
            $chunked = ($res->{headers}{'transfer-encoding'} // '')
                       =~ /chunked/;
            $head_done = 1;
            $buf = $rest;
        }

        # decode the chunks that are complete
        if ($chunked) {
            while ($buf =~ /^([0-9a-fA-F]+)\r\n/) {
                my $size = hex $1;
                my $hl = length($1) + 2;
                last if length($buf) < $hl + $size + 2;
                $pending .= substr($buf, $hl, $size);
                $res->{raw} .= substr($buf, $hl, $size);
                $buf = substr($buf, $hl + $size + 2);
                $res->{last_chunk} = 1 if $size == 0;
            }
        } else {
            $pending .= $buf;
            $buf = '';
        }

        while ($res->{status} && $res->{status} == 200
               && $pending =~ s/^(.*?)\n\n//s)
        {
            my $block = $1;
            my %ev;
            for my $l (split /\n/, $block) {
                if ($l =~ /^:\s?(.*)/) {
                    push @{ $res->{comments} }, $1;
                } elsif ($l =~ /^(\w+): ?(.*)$/) {
                    $ev{$1} = $2;
                }
            }
            next unless exists $ev{data};
            my $j = eval { decode_json($ev{data}) };
            # _t: when the event arrived, for timings inside a turn
            # _event, _json: the event's name and data as sent (the
            # LangGraph API's data may be a list)
            push @{ $res->{events} }, { id => $ev{id},
                                        %{ ref $j eq 'HASH' ? $j : {} },
                                        _event => $ev{event}, _json => $j,
                                        _data => $ev{data}, _t => time };
        }

        if ($o{stop_after} && @{ $res->{events} } >= $o{stop_after}) {
            $res->{stopped} = 1;
            last;
        }

        last if $res->{last_chunk};
    }

    if (($res->{status} // 0) != 200 && length $pending) {
        $res->{json} = eval { decode_json($pending) };
    }

    close $s;
    $res->{types} = [ map { $_->{type} // '?' } @{ $res->{events} } ];
    $res->{text} = join '', map { $_->{content} // '' }
                            grep { ($_->{type} // '') eq 'chunk' }
                            @{ $res->{events} };
    return $res;
}

# the standing assertions of every test file
sub check_log {
    my ($self, %o) = @_;
    my $log = $self->slurp('error.log');
    my @bad = grep { /\[(alert|crit)\]/ } split /\n/, $log;
    @bad = grep { $_ !~ $o{allow} } @bad if $o{allow};
    ok(!@bad, 'no alert or crit in error.log') or diag(join "\n", @bad);
    # make test-asan: a sanitizer's report fails the file that caused it
    if (my $d = $ENV{AGENT_SANITIZER_LOGS}) {
        my @reports = grep { -s $_ } glob("$d/asan.* $d/ubsan.*");
        ok(!@reports, 'no sanitizer report')
            or diag(join "\n", map { slurp_file($_) } @reports);
        rename $_, "$_.seen" for @reports;
    }

    my @died = grep { /exited on signal/ } split /\n/, $log;
    @died = grep { $_ !~ $o{allow} } @died if $o{allow};
    ok(!@died, 'no worker died') or diag(join "\n", @died);
}

sub slurp_file {
    my ($f) = @_;
    open my $fh, '<', $f or return '';
    local $/;
    my $s = <$fh> // '';
    return length $s > 20000 ? substr($s, 0, 20000) . "\n..." : $s;
}

my @receivers;
END { kill 'TERM', @receivers if @receivers }

# a webhook receiver on loopback, in a process of its own: each POST a
# line of LOG ({path, body, headers (lower-cased names)}); a path's first
# request answered 500, the next ones 200.  Returns its port; it stops
# with the test.
sub hook_receiver {
    my ($log) = @_;
    my $recv = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
                                     LocalPort => 0, Listen => 16,
                                     ReuseAddr => 1) or die $!;
    my $port = $recv->sockport;
    my $pid = fork();
    die $! unless defined $pid;
    if ($pid == 0) {
        my %seen;
        while (my $c = $recv->accept) {
            my ($line, %h) = (scalar <$c>);
            while (defined(my $l = <$c>)) {
                last if $l eq "\r\n";
                $h{lc $1} = $2 if $l =~ /^([^:]+):\s*(.*?)\r?$/;
            }
            my ($path) = ($line // '') =~ m{^POST (\S+)};
            my $body = '';
            read($c, $body, $h{'content-length'} // 0);
            open my $fh, '>>', $log or die;
            print $fh JSON::PP->new->canonical->encode({ path => $path // '',
                body => $body, headers => \%h }) . "\n";
            close $fh;
            my $s = $seen{$path // ''}++ ? '200 OK' : '500 Busy';
            print $c "HTTP/1.1 $s\r\nContent-Length: 0\r\n"
                     . "Connection: close\r\n\r\n";
            close $c;
        }
        POSIX::_exit(0);
    }
    close $recv;
    push @receivers, $pid;
    return $port;
}

# an OTLP collector on loopback, in a process of its own: each request's
# body a JSON line ({body}) of LOG, answered 200.  Returns its port; it
# stops with the test.
sub otlp_sink {
    my ($log) = @_;
    my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                  Listen => 16, ReuseAddr => 1) or die $!;
    my $port = $l->sockport;
    my $pid = fork();
    die $! unless defined $pid;
    if ($pid == 0) {
        while (my $c = $l->accept) {
            my ($head, $body) = ('', '');
            while (defined(my $line = <$c>)) {
                last if $line eq "\r\n";
                $head .= $line;
            }
            my ($len) = $head =~ /Content-Length: (\d+)/i;
            read($c, $body, $len // 0);
            open my $fh, '>>', $log or die;
            print $fh JSON::PP::encode_json({ body => $body }), "\n";
            close $fh;
            print $c "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     . "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
            close $c;
        }
        POSIX::_exit(0);
    }
    close $l;
    push @receivers, $pid;
    return $port;
}

# the spans a collector got: a hash each, its name and its attributes
sub otlp_spans {
    my ($log) = @_;
    my @s;
    open my $fh, '<', $log or return ();
    for my $req (map { JSON::PP::decode_json($_) } <$fh>) {
        my $doc = JSON::PP::decode_json($req->{body});
        for my $rs (@{ $doc->{resourceSpans} }) {
            for my $ss (@{ $rs->{scopeSpans} }) {
                push @s, map { my $sp = $_; +{ name => $sp->{name},
                    map { $_->{key} => (values %{ $_->{value} })[0] }
                    @{ $sp->{attributes} } } } @{ $ss->{spans} };
            }
        }
    }
    return @s;
}

# what a receiver got, a hash per request
sub hooks_got {
    my ($log) = @_;
    open my $fh, '<', $log or return ();
    return map { JSON::PP::decode_json($_) } <$fh>;
}

sub wait_for {
    my ($cond, $timeout) = @_;
    my $deadline = time + ($timeout // 10);
    while (time < $deadline) {
        return 1 if $cond->();
        sleep 0.05;
    }
    return 0;
}

# a forked script (a mock's answer) waits for the test: it leaves
# DIR/held-NAME, then waits (a minute at most) for DIR/free-NAME
sub hold {
    my ($dir, $name) = @_;
    open my $fh, '>', "$dir/held-$name" or die;
    close $fh;
    wait_for(sub { -e "$dir/free-$name" }, 60);
}

# the test lets the held answers go
sub free {
    my ($dir, @names) = @_;
    for my $name (@names) {
        open my $fh, '>', "$dir/free-$name" or die;
        close $fh;
    }
}

# a service for agent_tool locations: its Nth call of {"which": W} is
# answered {"W": N}, the first of each W held until the test frees "W1"
sub held_service {
    my ($self) = @_;
    my $dir = $self->{dir};
    return MockLLM->new(dir => $dir, name => 'svc', script => sub {
        my ($body) = @_;
        my $which = $body->{which} // 'none';
        my $n = 1;
        $n++ while -e "$dir/call-$which-$n";
        open my $fh, '>', "$dir/call-$which-$n" or die;
        close $fh;
        hold($dir, "$which$n") if $n == 1;
        return { status => 200, body => "{\"$which\": $n}" };
    });
}

# seed 001's MCP server (t/mcp/server.mjs, the official TypeScript SDK from
# npm) on a free loopback port, stateful or stateless; undef when the SDK
# cannot be installed.  Stopped with the test.
my @mcp_servers;
END { kill 'TERM', @mcp_servers if @mcp_servers }

sub mcp_server {
    my ($self, $mode) = @_;
    my $sdk = "$root/build/mcp";

    if (!-d "$sdk/node_modules/\@modelcontextprotocol/sdk") {
        system('sh', '-c', "mkdir -p $sdk && npm install --prefix $sdk "
               . '@modelcontextprotocol/sdk@1.32.2 --no-audit --no-fund '
               . '--loglevel=error >/dev/null 2>&1');
    }
    return undef unless -d "$sdk/node_modules/\@modelcontextprotocol/sdk";
    system('cp', "$root/t/mcp/server.mjs", "$sdk/server.mjs") == 0 or die;

    my $port = free_port();
    my $log = "$self->{dir}/mcp-$mode.log";
    my $pid = fork() // die;
    if ($pid == 0) {
        open STDOUT, '>>', "$self->{dir}/mcp-$mode.out";
        open STDERR, '>&', \*STDOUT;
        exec('node', "$sdk/server.mjs", $port, $mode, $log)
            or POSIX::_exit(1);
    }
    push @mcp_servers, $pid;
    wait_for(sub { -s $log }, 10) or die "no MCP server ($mode)";
    return { port => $port, log => $log, pid => $pid,
             url => "http://127.0.0.1:$port/mcp" };
}

# LangGraph's JS SDK from npm (t/lg/sdk.mjs): its observations of a
# scenario against URL, as a hash of name => value (or { error => ... })
sub lg_sdk {
    my ($self, $url, $scenario, @args) = @_;
    my $sdk = "$root/build/lgsdk";

    if (!-d "$sdk/node_modules/\@langchain/langgraph-sdk") {
        system('sh', '-c', "mkdir -p $sdk && npm install --prefix $sdk "
               . '@langchain/langgraph-sdk@1.15.0 --no-audit --no-fund '
               . '--loglevel=error >/dev/null 2>&1');
    }
    return undef unless -d "$sdk/node_modules/\@langchain/langgraph-sdk";

    open my $fh, '-|', 'node', "$root/t/lg/sdk.mjs", $sdk, $url, $scenario,
        @args or die $!;
    my (%seen, @order);
    while (my $line = <$fh>) {
        my $o = eval { decode_json($line) } or do { warn $line; next };
        $seen{$o->{k}} = exists $o->{error} ? { error => $o->{error} }
                                            : $o->{v};
        push @order, $o->{k};
    }
    close $fh;
    Test::More::diag(Test::More::explain($seen{__died__}))
        if $seen{__died__};
    $seen{_order} = \@order;
    return \%seen;
}

# LangGraph's own Agent Server (langgraphjs dev, npm) on a free loopback
# port, serving t/lg/graph.mjs with its model on $mock_url (.../v1);
# undef when it cannot be installed.  Stopped with the test.
sub lg_reference {
    my ($self, $mock_url) = @_;
    my $dir = "$root/build/lgapi";

    if (!-x "$dir/node_modules/.bin/langgraphjs"
        || !-d "$dir/node_modules/\@langchain/openai")
    {
        system('sh', '-c', "mkdir -p $dir && npm install --prefix $dir "
               . '@langchain/langgraph-cli@2.0.0 '
               . '@langchain/langgraph-api@2.0.0 @langchain/langgraph@1.7.3 '
               . '@langchain/core@1.4.0 @langchain/openai@1.5.8 '
               . '--legacy-peer-deps --no-audit --no-fund --loglevel=error '
               . '>/dev/null 2>&1');
    }
    return undef unless -x "$dir/node_modules/.bin/langgraphjs";

    system('mkdir', '-p', "$dir/ref") == 0 or die;
    system('cp', "$root/t/lg/graph.mjs", "$root/t/lg/langgraph.json",
           "$dir/ref/") == 0 or die;

    my $port = free_port();
    my $pid = fork() // die;
    if ($pid == 0) {
        chdir "$dir/ref" or POSIX::_exit(1);
        open STDOUT, '>>', "$self->{dir}/lg-reference.log";
        open STDERR, '>&', \*STDOUT;
        # nothing leaves the machine: no tracing, no telemetry
        $ENV{MOCK_URL} = $mock_url;
        # (the CLI posts usage analytics unless told not to)
        $ENV{LANGGRAPH_CLI_NO_ANALYTICS} = '1';
        $ENV{LANGSMITH_TRACING} = 'false';
        $ENV{LANGCHAIN_TRACING_V2} = 'false';
        $ENV{DO_NOT_TRACK} = '1';
        delete @ENV{qw(LANGSMITH_API_KEY LANGCHAIN_API_KEY OPENAI_API_KEY
                       http_proxy https_proxy HTTP_PROXY HTTPS_PROXY)};
        exec("$dir/node_modules/.bin/langgraphjs", 'dev', '--host',
             '127.0.0.1', '--port', $port, '--no-browser', '--no-reload',
             '--studio-url', "http://127.0.0.1:$port")
            or POSIX::_exit(1);
    }
    push @mcp_servers, $pid;
    my $url = "http://127.0.0.1:$port";
    wait_for(sub {
        my $r = HTTP::Tiny->new(timeout => 2)->get("$url/ok");
        $r->{success} }, 60) or die "no reference server: "
                                    . slurp_file("$self->{dir}/lg-reference.log");
    return { url => $url, pid => $pid };
}

# the tool calls an MCP server of mcp_server() saw
sub mcp_calls {
    my ($server) = @_;
    open my $fh, '<', $server->{log} or return ();
    return grep { $_->{tool} } map { decode_json($_) } <$fh>;
}

# make test-pg: the database that stands for a SQLite file's path, made
# on first use (t/pg/run starts the server and sets AGENT_PG)
my %pg_made;

sub pg_name {
    my ($path) = @_;
    return 't' . substr(md5_hex($path), 0, 20);
}

sub pg_url {
    my ($path) = @_;
    return $path if $path =~ m{^postgres};
    my $name = pg_name($path);
    unless ($pg_made{$name}++) {
        my $exists = pg_query('postgres', "SELECT 1 FROM pg_database "
                                          . "WHERE datname = '$name'");
        pg_query('postgres', "CREATE DATABASE $name") unless $exists;
    }
    return "$ENV{AGENT_PG}/$name";
}

# make test-pg: the store's unlock made slow (a trigger that sleeps when a
# session's lease is let go), so that an answer sent before it is seen;
# 0 takes the trigger away.  $db: a database's name, else this test's store
sub slow_unlock {
    my ($self, $secs, $db) = @_;
    return unless $ENV{AGENT_PG};
    $db //= pg_name($self->{dir} . '/agent.db');
    return pg_query($db, 'DROP TRIGGER slow_unlock ON sessions') unless $secs;
    return pg_query($db, qq{CREATE OR REPLACE FUNCTION slow_unlock()
        RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
        IF OLD.run_id IS NOT NULL AND NEW.run_id IS NULL THEN
        PERFORM pg_sleep($secs); END IF; RETURN NEW; END \$\$;
        CREATE TRIGGER slow_unlock BEFORE UPDATE ON sessions FOR EACH ROW
        EXECUTE FUNCTION slow_unlock()});
}

sub pg_query {
    my ($name, $sql) = @_;
    open my $fh, '-|', 'psql', '-X', '-q', '-At', '-d', "$ENV{AGENT_PG}/$name",
         '-c', $sql or die $!;
    local $/;
    my $out = <$fh> // '';
    close $fh;
    $out =~ s/\n+\z//;
    # booleans as SQLite writes them
    $out = join "\n", map { join '|', map { $_ eq 't' ? 1 : $_ eq 'f' ? 0 : $_ }
                                     split /\|/, $_, -1 } split /\n/, $out;
    return $out;
}

sub sqlite {
    my ($self, $db, $sql) = @_;
    if ($ENV{AGENT_PG} && $db =~ /agent[^\/]*\.db$/) {
        # the same questions to PostgreSQL; its own checks are its own
        return 'ok' if $sql =~ /^\s*PRAGMA integrity_check/i;
        return pg_query(pg_name($db), $sql);
    }
    # a write of the test's waits out a worker's (the shell's own busy
    # timeout is none: "database is locked" on stderr, the write lost)
    open my $fh, '-|', 'sqlite3', '-cmd', '.timeout 10000', $db, $sql
        or die $!;
    local $/;
    my $out = <$fh> // '';
    close $fh;
    $out =~ s/\n+\z//;
    return $out;
}

1;
