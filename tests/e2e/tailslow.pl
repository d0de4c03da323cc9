#!/usr/bin/perl
# tailslow.pl PORT PATH OUT PAUSE READ [UNTIL]: a live tail client that
# stops reading. Opens GET PATH on 127.0.0.1:PORT with a small receive
# buffer, reads the response headers, prints "ready", reads nothing for
# PAUSE seconds, prints "reading", then reads for at most READ seconds
# (until the text UNTIL has come, or the stream ends) and writes the body
# (chunked framing removed) to OUT.
use strict;
use warnings;
use IO::Socket::INET;
use Socket qw(SOL_SOCKET SO_RCVBUF);

my ($port, $path, $out, $pause, $read, $until) = @ARGV;
$| = 1;
my $s = IO::Socket::INET->new(Proto => 'tcp') or die "socket: $!";
setsockopt($s, SOL_SOCKET, SO_RCVBUF, 4096) or die "setsockopt: $!";
$s->connect(Socket::pack_sockaddr_in($port, Socket::inet_aton('127.0.0.1')))
    or die "connect: $!";
print $s "GET $path HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
my $head = '';
while ($head !~ /\r\n\r\n/) {
    my $n = sysread($s, my $b, 1) or die "no headers";
    $head .= $b;
}
print "ready\n";
sleep $pause;
print "reading\n";
my $raw = '';
my $end = time + $read;
$s->blocking(0);
while (time < $end) {
    my $n = sysread($s, my $b, 65536);
    if (defined $n && $n == 0) { last }
    if (!defined $n) { select(undef, undef, undef, 0.05); next }
    $raw .= $b;
    my $from = length($raw) - length($b) - 64;
    last if defined $until && index($raw, $until, $from < 0 ? 0 : $from) >= 0;
}
my $body = '';
while ($raw =~ /\G([0-9a-fA-F]+)\r\n/gc) {
    my $len = hex $1;
    last if $len == 0;
    my $at = pos($raw);
    last if $at + $len > length $raw;
    $body .= substr($raw, $at, $len);
    pos($raw) = $at + $len + 2;
}
open my $fh, '>', $out or die "$out: $!";
print $fh $body;
close $fh;
