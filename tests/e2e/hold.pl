#!/usr/bin/perl
# hold.pl PORT N SECONDS: opens N connections to 127.0.0.1:PORT, sends on
# each the headers and the first bytes of a write whose body never ends,
# prints "ready" and holds them for SECONDS (or until killed).
use strict;
use warnings;
use IO::Socket::INET;

$SIG{PIPE} = 'IGNORE';
my ($port, $n, $secs) = @ARGV;
$| = 1;
my @held;
for (1 .. $n) {
    my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 10)
        or die "connect: $!";
    $s->autoflush(1);
    print $s "POST /write?db=held HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        . "Content-Length: 100\r\n\r\ncpu,host=a v=";
    push @held, $s;
}
print "ready\n";
sleep $secs;
close $_ for @held;
