#!/usr/bin/perl
# rawhttp.pl PORT FILE [--no-read]: sends FILE's bytes to 127.0.0.1:PORT as
# they are, and prints the status line of the reply, or "closed" when the
# server closed the connection without one (a server may stop reading a
# request it refuses; the reset can then swallow its reply). For requests
# curl will not send.
use strict;
use warnings;
use IO::Socket::INET;

$SIG{PIPE} = 'IGNORE';
my ($port, $file, $flag) = @ARGV;
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
if (defined $flag && $flag eq '--no-read') {
    close $s;
    exit 0;
}
shutdown($s, 1);
$s->timeout(10);
my $line = <$s>;
print defined $line && length $line ? $line : "closed\n";
