package MockLLM;

# A scripted stand-in for a model provider: it speaks the real wire protocol
# (HTTP/1.1, keep-alive, chunked server-sent events) of OpenAI's chat
# completions (format => 'openai', the default; Azure's is the same),
# Anthropic's Messages API ('anthropic') or Gemini's streamGenerateContent
# ('gemini'), and does what each test's script says: text, tool calls,
# usage, delays, HTTP errors with headers, cut streams, garbage.

use strict;
use warnings;

use IO::Socket::INET;
use IO::Select;
use Socket qw(IPPROTO_TCP TCP_NODELAY);
use JSON::PP;
use POSIX ();
use Fcntl qw(:flock);
use Time::HiRes qw(sleep time);

use Exporter 'import';
our @EXPORT_OK = qw(text_chunks tool_chunks sse_body);

my $json = JSON::PP->new->canonical->allow_nonref;

# each completion its own id, as a provider's (LangChain keeps messages by it)
our $completion = 'chatcmpl-mock';

sub new {
    my ($class, %args) = @_;
    my $self = bless { %args }, $class;

    my $listen = IO::Socket::INET->new(
        LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 128,
        ReuseAddr => 1, Proto => 'tcp')
        or die "mock: cannot listen: $!";

    $self->{port} = $listen->sockport;
    my $name = $self->{name} ? "-$self->{name}" : '';
    $self->{log} = "$self->{dir}/mock$name.log";
    $self->{counter} = "$self->{dir}/mock$name.count";
    open my $fh, '>', $self->{log} or die;
    close $fh;
    open $fh, '>', $self->{counter} or die;
    print $fh "0";
    close $fh;

    my $pid = fork();
    die "fork: $!" unless defined $pid;

    if ($pid == 0) {
        $SIG{PIPE} = 'IGNORE';
        $SIG{CHLD} = 'IGNORE';
        $SIG{TERM} = sub { POSIX::_exit(0) };
        $self->serve($listen);
        POSIX::_exit(0);
    }

    close $listen;
    $self->{pid} = $pid;
    return $self;
}

sub port { $_[0]->{port} }

sub stop {
    my ($self) = @_;
    return unless $self->{pid};
    kill 'TERM', $self->{pid};
    waitpid($self->{pid}, 0);
    delete $self->{pid};
}

sub DESTROY { $_[0]->stop if $_[0]->{pid} && $$ != 0 }

# every request and every event the mock saw, one JSON line each
sub log_lines {
    my ($self) = @_;
    open my $fh, '<', $self->{log} or return ();
    my @l = map { $json->decode($_) } grep { /\S/ } <$fh>;
    close $fh;
    return @l;
}

sub requests { grep { $_->{event} eq 'request' } $_[0]->log_lines }

sub note_event {
    my ($self, $rec) = @_;
    open my $fh, '>>', $self->{log} or return;
    flock($fh, LOCK_EX);
    print $fh $json->encode($rec), "\n";
    close $fh;
}

sub next_n {
    my ($self) = @_;
    open my $fh, '+<', $self->{counter} or die;
    flock($fh, LOCK_EX);
    my $n = <$fh> + 1;
    seek($fh, 0, 0);
    truncate($fh, 0);
    print $fh $n;
    close $fh;
    return $n;
}

sub serve {
    my ($self, $listen) = @_;

    while (1) {
        my $c = $listen->accept or next;
        setsockopt($c, IPPROTO_TCP, TCP_NODELAY, 1);
        my $pid = fork();
        if (!defined $pid) { close $c; next; }
        if ($pid == 0) {
            close $listen;
            $self->connection($c);
            POSIX::_exit(0);
        }
        close $c;
    }
}

sub read_request {
    my ($c) = @_;
    my $buf = '';

    while ($buf !~ /\r\n\r\n/) {
        my $n = sysread($c, $buf, 65536, length $buf);
        return undef unless $n;
    }

    my ($head, $rest) = split /\r\n\r\n/, $buf, 2;
    my ($line, @h) = split /\r\n/, $head;
    my %h = map { my ($k, $v) = split /:\s*/, $_, 2; (lc $k, $v) } @h;
    my $len = $h{'content-length'} // 0;

    while (length $rest < $len) {
        my $n = sysread($c, $rest, 65536, length $rest);
        return undef unless $n;
    }

    my ($method, $path) = split / /, $line;
    return { method => $method, path => $path, headers => \%h,
             body => substr($rest, 0, $len) };
}

sub connection {
    my ($self, $c) = @_;

    while (my $req = read_request($c)) {
        my $n = $self->next_n;
        my $body = eval { $json->decode($req->{body}) }
                   // { _raw => $req->{body}, _err => "$@" };

        $self->note_event({ event => 'request', n => $n,
                            path => $req->{path},
                            auth => $req->{headers}{authorization} // '',
                            headers => $req->{headers},
                            body => $body,
                            $self->{raw} ? (raw => $req->{body}) : () });

        if ($req->{path} =~ m{/embeddings(?:\?|$)|:batchEmbedContents}) {
            my $spec = $self->{embed} ? $self->{embed}->($body, $n) : undef;
            my $keep = $spec && $spec->{status}
                ? $self->respond($c, $spec, $n)
                : $self->embed_respond($c, $body, $n);
            last unless $keep;
            next;
        }

        # as the real APIs do: a request whose tool calls and tool results
        # do not pair is refused before the script sees it
        if (my $err = pairing_error($self->{format} // 'openai', $body)) {
            $self->note_event({ event => 'unpaired', n => $n,
                                error => $err });
            $self->respond($c, { status => 400, message => $err }, $n);
            next;
        }

        my $spec = $self->{script}->($body, $n) // { text => 'ok' };

        # the request read, no answer: a kept connection found closed
        if ($spec->{hangup}) {
            $self->note_event({ event => 'hangup', n => $n });
            last;
        }

        my $keep = $self->respond($c, $spec, $n);
        last unless $keep;
    }

    close $c;
}

# The pairing rule of each wire format, with the words of its API's 400:
# every tool call is answered by a result right after its message, and
# every result answers a call of the message right before it.
sub pairing_error {
    my ($format, $body) = @_;
    return undef unless ref $body eq 'HASH';

    return anthropic_pairing($body->{messages}) if $format eq 'anthropic';
    return gemini_pairing($body->{contents}) if $format eq 'gemini';
    return openai_pairing($body->{messages});
}

sub openai_pairing {
    my ($msgs) = @_;
    my %open;

    for my $m (@{ ref $msgs eq 'ARRAY' ? $msgs : [] }) {
        my $role = $m->{role} // '';

        if ($role eq 'tool') {
            my $id = $m->{tool_call_id} // '';
            return "Invalid parameter: messages with role 'tool' must be a "
                   . "response to a preceeding message with 'tool_calls'."
                unless delete $open{$id};
            next;
        }

        return "An assistant message with 'tool_calls' must be followed by "
               . "tool messages responding to each 'tool_call_id'. The "
               . "following tool_call_ids did not have response messages: "
               . join(', ', sort keys %open)
            if %open;

        if ($role eq 'assistant' && ref $m->{tool_calls} eq 'ARRAY') {
            $open{ $_->{id} // '' } = 1 for @{ $m->{tool_calls} };
        }
    }

    return %open ? "An assistant message with 'tool_calls' must be followed "
                   . "by tool messages responding to each 'tool_call_id'. "
                   . "The following tool_call_ids did not have response "
                   . "messages: " . join(', ', sort keys %open)
                 : undef;
}

sub blocks_of {
    my ($m, $type, $key) = @_;
    my $c = $m->{content};
    return () unless ref $c eq 'ARRAY';
    return map { $_->{$key} // '' } grep { ($_->{type} // '') eq $type } @$c;
}

sub anthropic_pairing {
    my ($msgs) = @_;
    my @m = @{ ref $msgs eq 'ARRAY' ? $msgs : [] };

    for my $i (0 .. $#m) {
        my %uses = map { $_ => 1 }
                   ($m[$i]{role} // '') eq 'assistant'
                   ? blocks_of($m[$i], 'tool_use', 'id') : ();
        my %results = map { $_ => 1 }
                      $i < $#m && ($m[$i + 1]{role} // '') eq 'user'
                      ? blocks_of($m[$i + 1], 'tool_result', 'tool_use_id')
                      : ();
        my @missing = grep { !$results{$_} } sort keys %uses;

        return "messages.$i: `tool_use` ids were found without "
               . "`tool_result` blocks immediately after: "
               . join(', ', @missing) . ". Each `tool_use` block must have "
               . "a corresponding `tool_result` block in the next message."
            if @missing;

        my %prev = map { $_ => 1 }
                   $i > 0 && ($m[$i - 1]{role} // '') eq 'assistant'
                   ? blocks_of($m[$i - 1], 'tool_use', 'id') : ();

        for my $r (($m[$i]{role} // '') eq 'user'
                   ? blocks_of($m[$i], 'tool_result', 'tool_use_id') : ())
        {
            return "messages.$i.content: unexpected `tool_use_id` found in "
                   . "`tool_result` blocks: $r. Each `tool_result` block "
                   . "must have a corresponding `tool_use` block in the "
                   . "previous message."
                unless $prev{$r};
        }
    }

    return undef;
}

sub gemini_pairing {
    my ($contents) = @_;
    my @c = @{ ref $contents eq 'ARRAY' ? $contents : [] };
    my $count = sub {
        my ($c, $key) = @_;
        return scalar grep { ref $_ eq 'HASH' && $_->{$key} }
                      @{ ref $c->{parts} eq 'ARRAY' ? $c->{parts} : [] };
    };

    for my $i (0 .. $#c) {
        my $calls = $count->($c[$i], 'functionCall');
        my $answers = $count->($c[$i], 'functionResponse');
        my $before = $i > 0 ? $count->($c[$i - 1], 'functionCall') : 0;
        my $after = $i < $#c ? $count->($c[$i + 1], 'functionResponse') : 0;

        return "Please ensure that the number of function response parts is "
               . "equal to the number of function call parts of the function "
               . "call turn."
            if ($calls && $calls != $after) || ($answers && $answers != $before);
    }

    return undef;
}

sub respond {
    my ($self, $c, $spec, $n) = @_;
    local $MockLLM::completion = "chatcmpl-mock-$n";

    if (my $s = $spec->{status}) {
        my $b = $spec->{body} // $json->encode(
            { error => { message => $spec->{message} // "mock error $s",
                         type => 'mock' } });
        sleep($spec->{delay}) if $spec->{delay};
        my $h = join '', map { "$_: $spec->{headers}{$_}\r\n" }
                         sort keys %{ $spec->{headers} // {} };
        # short: the length says more than is sent (a body cut short)
        syswrite($c, "HTTP/1.1 $s Mock\r\nContent-Type: application/json\r\n"
                     . $h . "Content-Length: "
                     . (length($b) + ($spec->{short} // 0)) . "\r\n\r\n$b");
        return !$spec->{short};
    }

    my @chunks = @{ $spec->{chunks} // [] };
    my $format = $self->{format} // 'openai';

    if (!@chunks && $format eq 'anthropic') {
        @chunks = anthropic_chunks($spec);

    } elsif (!@chunks && $format eq 'gemini') {
        @chunks = gemini_chunks($spec);

    } elsif (!@chunks) {
        @chunks = $spec->{tools}
            ? tool_chunks($spec->{tools}, $spec->{pieces} // 3,
                          $spec->{usage})
            : text_chunks($spec->{text} // 'ok', $spec->{pieces},
                          $spec->{usage});
    }

    my $head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
               . "Transfer-Encoding: chunked\r\n\r\n";
    return 0 unless syswrite($c, $head);
    sleep($spec->{first_delay}) if $spec->{first_delay};

    my $sel = IO::Select->new($c);
    my $i = 0;

    for my $chunk (@chunks) {
        if ($spec->{stall_after} && $i == $spec->{stall_after}) {
            sleep($spec->{stall});
        }

        if ($spec->{cut_after} && $i == $spec->{cut_after}) {
            $self->note_event({ event => 'cut', n => $n });
            return 0;
        }

        sleep($spec->{delay}) if $spec->{delay} && $i > 0;

        # a peer that closed shows as readable with nothing to read
        if ($sel->can_read(0)) {
            my $tmp;
            if (!sysread($c, $tmp, 1)) {
                $self->note_event({ event => 'closed', n => $n, at => $i });
                return 0;
            }
        }

        my $data = sprintf("%x\r\n%s\r\n", length $chunk, $chunk);
        if (!syswrite($c, $data)) {
            $self->note_event({ event => 'closed', n => $n, at => $i });
            return 0;
        }

        $i++;
    }

    syswrite($c, "0\r\n\r\n");
    $self->note_event({ event => 'done', n => $n });
    return 1;
}

# Embeddings (OpenAI's /v1/embeddings, Gemini's batchEmbedContents): a
# bag of words, each word (lowercase \w+) hashed (FNV-1a) to one of the
# dimensions (the request's, or 64), so that texts sharing words score
# higher; `embed => sub { ($body, $n) }` may answer { status => ... }.
sub embed_vector {
    my ($text, $dims) = @_;
    my @v = (0) x $dims;
    for my $w (lc($text // '') =~ /(\w+)/g) {
        my $h = 2166136261;
        for my $ch (unpack 'C*', $w) {
            $h = (($h ^ $ch) * 16777619) % 4294967296;
        }
        $v[$h % $dims] += 1;
    }
    return \@v;
}

sub embed_respond {
    my ($self, $c, $body, $n) = @_;
    my $out;

    if ($body->{requests}) {
        $out = { embeddings => [ map {
            { values => embed_vector($_->{content}{parts}[0]{text},
                                     $_->{outputDimensionality} // 64) }
        } @{ $body->{requests} } ] };
    } else {
        my $i = 0;
        $out = { object => 'list', model => $body->{model},
                 data => [ map {
                     { object => 'embedding', index => $i++,
                       embedding => embed_vector($_,
                                                 $body->{dimensions} // 64) }
                 } @{ $body->{input} // [] } ],
                 usage => { prompt_tokens => 3, total_tokens => 3 } };
    }

    my $b = $json->encode($out);
    return 0 unless syswrite($c, "HTTP/1.1 200 OK\r\nContent-Type: "
                                 . "application/json\r\nContent-Length: "
                                 . length($b) . "\r\n\r\n$b");
    $self->note_event({ event => 'done', n => $n });
    return 1;
}

sub sse_body {
    my ($obj) = @_;
    return "data: " . (ref $obj ? $json->encode($obj) : $obj) . "\n\n";
}

sub frame {
    my (%d) = @_;
    return { id => $MockLLM::completion, object => 'chat.completion.chunk',
             created => 1700000000, model => 'mock',
             choices => [ { index => 0, delta => $d{delta} // {},
                            finish_reason => $d{finish} } ] };
}

sub usage_frame {
    my ($p, $c, $u) = @_;
    ($p, $c) = ($u->{prompt}, $u->{completion}) if $u;
    my $usage = { prompt_tokens => $p, completion_tokens => $c,
                  total_tokens => $p + $c };
    $usage->{prompt_tokens_details} = { cached_tokens => $u->{cached} }
        if $u && defined $u->{cached};
    return { id => $MockLLM::completion, object => 'chat.completion.chunk',
             choices => [], usage => $usage };
}

# the text in pieces (words by default), a finish, the usage, [DONE]
sub text_chunks {
    my ($text, $pieces, $usage) = @_;
    my @p = defined $pieces ? @$pieces : ($text =~ /(\S+\s*)/g);
    @p = ($text) unless @p;

    return (sse_body(frame(delta => { role => 'assistant', content => '' })),
            (map { sse_body(frame(delta => { content => $_ })) } @p),
            sse_body(frame(finish => 'stop')),
            sse_body(usage_frame(10, scalar @p, $usage)),
            sse_body('[DONE]'));
}

# tool calls: [[id, name, arguments-json]...], arguments cut into pieces
sub tool_chunks {
    my ($calls, $pieces, $usage) = @_;
    my @out = (sse_body(frame(delta => { role => 'assistant',
                                         content => undef })));
    my $index = 0;

    for my $call (@$calls) {
        my ($id, $name, $args) = @$call;
        push @out, sse_body(frame(delta => { tool_calls => [ {
            index => $index, id => $id, type => 'function',
            function => { name => $name, arguments => '' } } ] }));

        my $size = int(length($args) / $pieces) + 1;
        for (my $o = 0; $o < length $args; $o += $size) {
            push @out, sse_body(frame(delta => { tool_calls => [ {
                index => $index,
                function => { arguments => substr($args, $o, $size) } } ] }));
        }

        $index++;
    }

    push @out, sse_body(frame(finish => 'tool_calls')),
               sse_body(usage_frame(20, 5, $usage)), sse_body('[DONE]');
    return @out;
}

sub anthropic_event {
    my ($obj) = @_;
    return "event: $obj->{type}\n" . sse_body($obj);
}

# Anthropic's stream of the spec: text pieces, or tool_use blocks whose
# input comes in input_json_delta pieces
sub anthropic_chunks {
    my ($spec) = @_;
    my $u = $spec->{usage} // { prompt => 10, completion => 5 };
    my @out = anthropic_event({ type => 'message_start', message => {
        id => 'msg_mock', type => 'message', role => 'assistant',
        content => [], model => 'mock', stop_reason => undef,
        usage => { input_tokens => $u->{prompt} - ($u->{cached} // 0)
                                   - ($u->{cache_write} // 0),
                   cache_read_input_tokens => $u->{cached} // 0,
                   cache_creation_input_tokens => $u->{cache_write} // 0,
                   output_tokens => 1 } } });
    push @out, anthropic_event({ type => 'ping' });
    my $stop = 'end_turn';

    if ($spec->{tools}) {
        my $i = 0;
        for my $call (@{ $spec->{tools} }) {
            my ($id, $name, $args) = @$call;
            push @out, anthropic_event({ type => 'content_block_start',
                index => $i, content_block => { type => 'tool_use',
                id => $id, name => $name, input => {} } });
            my $pieces = $spec->{pieces} // 3;
            my $size = int(length($args) / $pieces) + 1;
            for (my $o = 0; $o < length $args; $o += $size) {
                push @out, anthropic_event({ type => 'content_block_delta',
                    index => $i, delta => { type => 'input_json_delta',
                    partial_json => substr($args, $o, $size) } });
            }
            push @out, anthropic_event({ type => 'content_block_stop',
                                         index => $i });
            $i++;
        }
        $stop = 'tool_use';

    } else {
        my $text = $spec->{text} // 'ok';
        my @p = $spec->{pieces} ? @{ $spec->{pieces} } : ($text =~ /(\S+\s*)/g);
        @p = ($text) unless @p;
        push @out, anthropic_event({ type => 'content_block_start',
            index => 0, content_block => { type => 'text', text => '' } });
        push @out, map { anthropic_event({ type => 'content_block_delta',
            index => 0, delta => { type => 'text_delta', text => $_ } }) } @p;
        push @out, anthropic_event({ type => 'content_block_stop',
                                     index => 0 });
    }

    push @out, anthropic_event({ type => 'message_delta',
        delta => { stop_reason => $stop, stop_sequence => undef },
        usage => { output_tokens => $u->{completion} } }),
        anthropic_event({ type => 'message_stop' });
    return @out;
}

# Gemini's stream of the spec: a response per text piece, the last with
# the finishReason and usage; function calls whole, in one response
sub gemini_chunks {
    my ($spec) = @_;
    my $u = $spec->{usage} // { prompt => 10, completion => 5 };
    my $usage = { promptTokenCount => $u->{prompt},
                  candidatesTokenCount => $u->{completion},
                  totalTokenCount => $u->{prompt} + $u->{completion} };
    $usage->{cachedContentTokenCount} = $u->{cached} if $u->{cached};
    my $resp = sub {
        my ($parts, $last) = @_;
        my $r = { candidates => [ { content => { role => 'model',
                                                 parts => $parts },
                                    index => 0 } ],
                  modelVersion => 'mock' };
        if ($last) {
            $r->{candidates}[0]{finishReason} = 'STOP';
            $r->{usageMetadata} = $usage;
        }
        return sse_body($r);
    };

    if ($spec->{tools}) {
        return $resp->([ map { { functionCall => { name => $_->[1],
                               args => $json->decode($_->[2]) } } }
                         @{ $spec->{tools} } ], 1);
    }

    my $text = $spec->{text} // 'ok';
    my @p = $spec->{pieces} ? @{ $spec->{pieces} } : ($text =~ /(\S+\s*)/g);
    @p = ($text) unless @p;
    my @out;
    for my $i (0 .. $#p) {
        push @out, $resp->([ { text => $p[$i] } ], $i == $#p);
    }
    return @out;
}

1;
