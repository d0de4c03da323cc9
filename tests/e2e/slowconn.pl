#!/usr/bin/perl
# slowconn.pl PORT FROM N GAP SECS: opens N connections to 127.0.0.1:PORT
# from the local address FROM (any 127.x.y.z), sends on each the start of
# a request's headers and then one more header byte every GAP seconds: a
# client whose headers never end. Prints "ready K" once K connections are
# open (K < N when the server refused some), then, after SECS seconds or
# once the server has closed them all, "closed C after S" (C closed by the
# server, S seconds after ready).
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time sleep);

$SIG{PIPE} = 'IGNORE';
my ($port, $from, $n, $gap, $secs) = @ARGV;
$| = 1;
my @open;
for (1 .. $n) {
    my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", LocalAddr => $from,
        Timeout => 5) or last;
    $s->autoflush(1);
    syswrite($s, "GET /ping HTTP/1.1\r\nHost: x\r\nX-Slow: ") or last;
    push @open, $s;
}
# A connection the server refused at once reads EOF right away.
sleep 0.3;
my $sel = IO::Select->new(@open);
for my $s ($sel->can_read(0)) {
    my $buf;
    if (!sysread($s, $buf, 4096)) {
        $sel->remove($s);
        @open = grep { $_ != $s } @open;
    }
}
my $ready = time;
print "ready " . scalar(@open) . "\n";
my $closed = 0;
my $next = time + $gap;
while (@open && time - $ready < $secs) {
    my @r = IO::Select->new(@open)->can_read(0.05);
    for my $s (@r) {
        my $buf;
        my $got = sysread($s, $buf, 4096);
        next if $got;
        $closed++;
        @open = grep { $_ != $s } @open;
    }
    if (time >= $next) {
        syswrite($_, "a") for @open;
        $next += $gap;
    }
}
printf "closed %d after %.1f\n", $closed, time - $ready;
close $_ for @open;
