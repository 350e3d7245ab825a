package Wire;

# What a scripted provider received, read back from its own wire format
# into one shape, so that a test can say "every provider was sent the same
# conversation": the system prompt, the tool names, and the messages as
# { role => user, text, images => [mime...] }, { role => assistant, text,
# calls => [[name, args]...] } or { role => tool, name, content } (content
# decoded from JSON when it is JSON).

use strict;
use warnings;
use JSON::PP;

use Exporter 'import';
our @EXPORT_OK = qw(neutral);

my $json = JSON::PP->new->canonical->allow_nonref;

sub maybe_json {
    my ($v) = @_;
    return $v if ref $v;
    my $d = eval { $json->decode($v) };
    return defined $d ? $d : $v;
}

sub neutral {
    my ($format, $body) = @_;
    return $format eq 'anthropic' ? anthropic($body)
         : $format eq 'gemini'    ? gemini($body)
         : openai($body);
}

sub openai {
    my ($b) = @_;
    my %out = (tools => [ map { $_->{function}{name} } @{ $b->{tools} // [] } ],
               messages => []);
    my %names;

    for my $m (@{ $b->{messages} }) {
        if ($m->{role} eq 'system') {
            $out{system} = $m->{content};
            next;
        }

        if ($m->{role} eq 'tool') {
            push @{ $out{messages} }, { role => 'tool',
                name => $names{ $m->{tool_call_id} } // '?',
                content => maybe_json($m->{content}) };
            next;
        }

        my ($text, @images) = ('');
        if (ref $m->{content}) {
            for my $p (@{ $m->{content} }) {
                $text .= $p->{text} if $p->{type} eq 'text';
                push @images, $1
                    if $p->{type} eq 'image_url'
                       && $p->{image_url}{url} =~ /^data:([^;]+);base64,/;
                # a PDF: a file part, its data URL in file_data
                push @images, $1
                    if $p->{type} eq 'file'
                       && ($p->{file}{file_data} // '')
                          =~ /^data:([^;]+);base64,/;
            }
        } else {
            $text = $m->{content} // '';
        }

        if ($m->{role} eq 'user') {
            push @{ $out{messages} }, { role => 'user', text => $text,
                                        images => \@images };
            next;
        }

        my @calls;
        for my $c (@{ $m->{tool_calls} // [] }) {
            $names{ $c->{id} } = $c->{function}{name};
            push @calls, [ $c->{function}{name},
                           maybe_json($c->{function}{arguments}) ];
        }
        push @{ $out{messages} }, { role => 'assistant', text => $text,
                                    calls => \@calls };
    }

    return \%out;
}

sub anthropic {
    my ($b) = @_;
    my %out = (tools => [ map { $_->{name} } @{ $b->{tools} // [] } ],
               messages => []);
    $out{system} = join '', map { $_->{text} } @{ $b->{system} // [] };
    my %names;

    for my $m (@{ $b->{messages} }) {
        my ($text, @images, @calls) = ('');
        for my $p (@{ $m->{content} }) {
            if ($p->{type} eq 'tool_result') {
                push @{ $out{messages} }, { role => 'tool',
                    name => $names{ $p->{tool_use_id} } // '?',
                    content => maybe_json($p->{content}) };
            } elsif ($p->{type} eq 'text') {
                $text .= $p->{text};
            } elsif ($p->{type} eq 'image' || $p->{type} eq 'document') {
                push @images, $p->{source}{media_type};
            } elsif ($p->{type} eq 'tool_use') {
                $names{ $p->{id} } = $p->{name};
                push @calls, [ $p->{name}, $p->{input} ];
            }
        }

        turn(\%out, $m->{role} eq 'user', $text, \@images, \@calls);
    }

    return \%out;
}

# a user's turn (when it says anything) or the assistant's, normalized
sub turn {
    my ($out, $user, $text, $images, $calls) = @_;

    if ($user) {
        push @{ $out->{messages} }, { role => 'user', text => $text,
                                      images => $images }
            if length $text || @$images;
    } else {
        push @{ $out->{messages} }, { role => 'assistant', text => $text,
                                      calls => $calls };
    }
}

sub gemini {
    my ($b) = @_;
    my %out = (tools => [ map { $_->{name} }
                          map { @{ $_->{functionDeclarations} // [] } }
                          @{ $b->{tools} // [] } ],
               messages => []);
    $out{system} = join '', map { $_->{text} }
                            @{ $b->{systemInstruction}{parts} // [] };

    for my $m (@{ $b->{contents} }) {
        my ($text, @images, @calls) = ('');
        for my $p (@{ $m->{parts} }) {
            if ($p->{functionResponse}) {
                my $r = $p->{functionResponse}{response};
                push @{ $out{messages} }, { role => 'tool',
                    name => $p->{functionResponse}{name},
                    content => (ref $r eq 'HASH' && keys %$r == 1
                                && exists $r->{result})
                               ? maybe_json($r->{result}) : $r };
            } elsif (defined $p->{text}) {
                $text .= $p->{text};
            } elsif ($p->{inlineData}) {
                push @images, $p->{inlineData}{mimeType};
            } elsif ($p->{functionCall}) {
                push @calls, [ $p->{functionCall}{name},
                               $p->{functionCall}{args} ];
            }
        }

        turn(\%out, $m->{role} eq 'user', $text, \@images, \@calls);
    }

    return \%out;
}

1;
