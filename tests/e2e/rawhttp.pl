#!/usr/bin/perl
# rawhttp.pl PORT FILE [--full | --no-read | --hold SECS | --trickle GAP SECS]:
# sends FILE's bytes to 127.0.0.1:PORT as they are, and prints the status
# line of the reply, or "closed" when the server closed the connection
# without one (a server may stop reading a request it refuses; the reset can
# then swallow its reply). For requests curl will not send.
#   --full          prints the whole reply (status line, headers, body)
#   --no-read       closes at once after sending
#   --hold SECS     keeps the connection open (the request never ends) and
#                   waits up to SECS seconds for a reply or a close; "open"
#                   if neither came
#   --trickle GAP SECS  as --hold, sending one more byte "x" every GAP
#                   seconds: a body that comes a byte at a time
use strict;
use warnings;
use IO::Socket::INET;
use Time::HiRes qw(time);

$SIG{PIPE} = 'IGNORE';
my ($port, $file, $flag, @args) = @ARGV;
my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 10)
    or die "connect: $!";
open my $f, '<:raw', $file or die "$file: $!";
my $data = do { local $/; <$f> };
$s->autoflush(1);
my $off = 0;
while ($off < length $data) {
    my $n = syswrite($s, $data, 65536, $off);
    last unless defined $n && $n > 0;
    $off += $n;
}
$flag //= '';
if ($flag eq '--no-read') {
    close $s;
    exit 0;
}
if ($flag eq '--hold' || $flag eq '--trickle') {
    my ($gap, $secs) = $flag eq '--hold' ? (undef, $args[0]) : @args;
    my $end = time + $secs;
    my $rin = '';
    vec($rin, fileno($s), 1) = 1;
    while (time < $end) {
        my $wait = $end - time;
        $wait = $gap if defined $gap && $gap < $wait;
        last if select(my $rout = $rin, undef, undef, $wait) > 0;
        last if defined $gap && !defined syswrite($s, 'x');
    }
    if (!select(my $rout = $rin, undef, undef, 0)) {
        print "open\n";
        exit 0;
    }
    my $n = sysread($s, my $buf, 4096);
    print $n ? (split /\n/, $buf)[0] . "\n" : "closed\n";
    exit 0;
}
shutdown($s, 1);
$s->timeout(10);
if ($flag eq '--full') {
    my ($all, $rin) = ('', '');
    vec($rin, fileno($s), 1) = 1;
    while (select(my $rout = $rin, undef, undef, 10) && sysread($s, my $buf, 65536)) {
        $all .= $buf;
    }
    print length $all ? $all : "closed\n";
    exit 0;
}
my $line = <$s>;
print defined $line && length $line ? $line : "closed\n";
