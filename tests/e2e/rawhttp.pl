#!/usr/bin/perl
# rawhttp.pl PORT FILE [--no-read]: sends FILE's bytes to 127.0.0.1:PORT as
# they are, and prints the status line of the reply (or nothing if the
# connection was closed without one). For requests curl will not send.
use strict;
use warnings;
use IO::Socket::INET;

my ($port, $file, $flag) = @ARGV;
my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 10)
    or die "connect: $!";
open my $f, '<:raw', $file or die "$file: $!";
my $data = do { local $/; <$f> };
$s->autoflush(1);
print {$s} $data;
if (defined $flag && $flag eq '--no-read') {
    close $s;
    exit 0;
}
shutdown($s, 1);
$s->timeout(10);
my $line = <$s>;
print defined $line ? $line : "";
