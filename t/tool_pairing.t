#!/usr/bin/perl
# Tool calls and their results always pair, as every provider's API
# requires: the scripted providers refuse a request where they do not (the
# first check here is that they do), a capped tool round closes the calls
# it leaves open (seed 001's tool_rounds: the issue's "4 tool calls and 3
# tool results"), and a history stored unpaired (by an older version, or
# cut between a model and its tools) is paired again in the next request.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use Wire qw(neutral);
use JSON::PP;
use HTTP::Tiny;

my $json = JSON::PP->new->canonical;

# the mock itself: one unpaired request per wire format is a 400
my %unpaired = (
    openai => { model => 'm', messages => [
        { role => 'user', content => 'hi' },
        { role => 'assistant', content => '', tool_calls => [
            { id => 'a', type => 'function',
              function => { name => 'f', arguments => '{}' } },
            { id => 'b', type => 'function',
              function => { name => 'f', arguments => '{}' } } ] },
        { role => 'tool', tool_call_id => 'a', content => 'x' },
        { role => 'user', content => 'again' } ] },
    anthropic => { model => 'm', messages => [
        { role => 'user', content => [ { type => 'text', text => 'hi' } ] },
        { role => 'assistant', content => [
            { type => 'tool_use', id => 'a', name => 'f', input => {} } ] },
        { role => 'user', content => [ { type => 'text', text => 'x' } ] } ] },
    gemini => { contents => [
        { role => 'user', parts => [ { text => 'hi' } ] },
        { role => 'model', parts => [
            { functionCall => { name => 'f', args => {} } },
            { functionCall => { name => 'g', args => {} } } ] },
        { role => 'user', parts => [
            { functionResponse => { name => 'f', response => {} } } ] } ] },
);

for my $format (qw(openai anthropic gemini)) {
    my $t = AgentTest->new;
    my $mock = $t->mock(sub { { text => 'fine' } }, format => $format);
    my $r = HTTP::Tiny->new->post("http://127.0.0.1:" . $mock->port . "/x",
        { content => $json->encode($unpaired{$format}) });
    is($r->{status}, 400, "$format mock: an unpaired request is refused");
    my ($u) = grep { $_->{event} eq 'unpaired' } $mock->log_lines;
    ok($u, "$format mock: and says why") and note $u->{error};
}

my %url = (
    openai => 'http://127.0.0.1:%%MOCK%%/v1/chat/completions',
    anthropic => 'http://127.0.0.1:%%MOCK%%',
    gemini => 'http://127.0.0.1:%%MOCK%%/v1beta',
);

sub user_text {
    my ($format, $body) = @_;
    my ($u) = grep { $_->{role} eq 'user' }
              reverse @{ neutral($format, $body)->{messages} };
    return $u ? $u->{text} : '';
}

for my $format (qw(openai anthropic gemini)) {
    my $t = AgentTest->new;
    my $calls = 0;
    my $mock = $t->mock(sub {
        my ($body, $n) = @_;
        my $q = user_text($format, $body);
        return { text => '{"actionHint": "done"}' } if $q ne 'forever';
        # the model never stops calling tools, two at a time
        $calls++;
        return { tools => [ [ "c${n}a", 'load_csv_data', '{}' ],
                            [ "c${n}b", 'load_csv_data', '{}' ] ] };
    }, format => $format);

    my $conf = $t->graph_conf('tool_rounds');
    $conf =~ s{agent_model mock [^;]*;}
              {agent_model m provider=$format url=$url{$format} model=remote-1 key_env=K alias=default;};
    $conf =~ s/^(worker_processes)/env K=k;\n$1/m;
    $t->run($conf);

    my $sid = $t->session;
    my $r = $t->turn($sid, 'forever');
    is($r->{types}[-1], 'end', "$format: the capped turn ends");

    $r = $t->turn($sid, 'and now?');
    is($r->{types}[-1], 'end', "$format: the next turn is accepted")
        or diag explain $r->{events}[-1];
    is(scalar(grep { $_->{event} eq 'unpaired' } $mock->log_lines), 0,
       "$format: no request was unpaired");

    my @reqs = $mock->requests;
    my $last = neutral($format, $reqs[-1]{body});
    my @c = map { @{ $_->{calls} // [] } }
            grep { $_->{role} eq 'assistant' } @{ $last->{messages} };
    my @res = grep { $_->{role} eq 'tool' } @{ $last->{messages} };
    is(scalar @c, 6, "$format: three rounds of two calls were sent");
    is(scalar @res, 6, "$format: with six results");
    my @not = grep { !ref $_->{content} && $_->{content} =~ /^Not run/ }
              @res;
    is(scalar @not, 2, "$format: two of them say they were not run");

    my $m = $t->http('GET', "/api/sessions/$sid/messages?include_tools=1")
              ->{json}{messages};
    my @stored = grep { ($_->{content} // '') =~ /^Not run/ } @$m;
    is(scalar @stored, 2, "$format: the closing results are stored");
    like($stored[0]{content}, qr/"llm_call" went on to "format_response"/,
         "$format: and say where the turn went");
    $t->check_log;
}

# a history stored unpaired: calls without results, a result without a call
{
    my $t = AgentTest->new;
    my $mock = $t->mock(sub {
        my ($body, $n) = @_;
        return { tools => [ [ 'k1', 'load_csv_data', '{}' ],
                            [ 'k2', 'load_csv_data', '{}' ] ] } if $n == 1;
        return { text => "answer $n" };
    });
    $t->run;

    my $sid = $t->session;
    my $r = $t->turn($sid, 'first');
    is($r->{types}[-1], 'end', 'old history: a turn with two tool calls');

    my $db = $t->dir . '/agent.db';
    $t->sqlite($db, "UPDATE messages SET role = 'user', content = 'note', "
                    . "tool_call_id = NULL WHERE tool_call_id = 'k1'");
    $t->sqlite($db, "UPDATE messages SET tool_call_id = 'ghost' "
                    . "WHERE tool_call_id = 'k2'");

    $r = $t->turn($sid, 'second');
    is($r->{types}[-1], 'end', 'old history: the next turn is accepted')
        or diag explain $r->{events}[-1];
    my @reqs = $mock->requests;
    my @tool = grep { $_->{role} eq 'tool' } @{ $reqs[-1]{body}{messages} };
    is_deeply([ map { $_->{tool_call_id} } @tool ], [qw(k1 k2)],
              'old history: each call answered, the stray result left out');
    is(scalar(grep { $_->{content} =~ /^Not run/ } @tool), 2,
       'old history: as not run');
    is(scalar(grep { $_->{event} eq 'unpaired' } $mock->log_lines), 0,
       'old history: the provider was never sent an unpaired request');
    like($t->slurp('error.log'), qr/tool calls left open in the history/,
         'old history: the log says so');
    $t->check_log;
}

done_testing;
