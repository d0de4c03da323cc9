#!/usr/bin/perl
# Raw syslog senders for the end-to-end tests (core Perl only):
#   syslog-send.pl tcp PORT FILE     sends FILE over one connection, closes its
#                                    side and waits (5 s at most) for the close
#   syslog-send.pl keep PORT FILE SECS  sends FILE and keeps the connection
#                                    open until the daemon closes it (SECS at most)
#   syslog-send.pl udp PORT FILE...  each FILE one datagram
#   syslog-send.pl hold PORT N SECS  opens N connections that send nothing and
#                                    prints, for each, "closed" and after how
#                                    many tenths of a second the daemon closed
#                                    it, or "open" if it did not within SECS
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time sleep);

my ($mode, $port, @rest) = @ARGV;

sub slurp {
    my ($f) = @_;
    open(my $fh, '<:raw', $f) or die "$f: $!";
    local $/;
    my $d = <$fh>;
    return defined $d ? $d : '';
}

if ($mode eq 'tcp' || $mode eq 'keep') {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp')
        or die "connect: $!";
    my $d = slurp($rest[0]);
    my $off = 0;
    while ($off < length $d) {
        my $n = syswrite($s, $d, length($d) - $off, $off);
        die "write: $!" unless defined $n;
        $off += $n;
    }
    shutdown($s, 1) if $mode eq 'tcp';
    my $sel = IO::Select->new($s);
    my $end = time + ($mode eq 'tcp' ? 5 : $rest[1]);
    while (time < $end) {
        last unless $sel->can_read($end - time);
        my $buf;
        my $n = sysread($s, $buf, 4096);
        last if !defined $n || $n == 0;
    }
    close $s;
} elsif ($mode eq 'udp') {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'udp')
        or die "socket: $!";
    for my $f (@rest) {
        defined send($s, slurp($f), 0) or die "send: $!";
    }
} elsif ($mode eq 'hold') {
    my ($n, $secs) = @rest;
    my @socks;
    for (1 .. $n) {
        my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp')
            or die "connect: $!";
        push @socks, $s;
    }
    my $start = time;
    my %when;
    my $sel = IO::Select->new(@socks);
    while ($sel->count && time - $start < $secs) {
        for my $s ($sel->can_read(0.1)) {
            my $buf;
            my $r = sysread($s, $buf, 1);
            next if defined $r && $r > 0;
            $when{$s} = int((time - $start) * 10);
            $sel->remove($s);
        }
    }
    for my $s (@socks) {
        print exists $when{$s} ? "closed $when{$s}\n" : "open\n";
        close $s;
    }
} else {
    die "usage: syslog-send.pl tcp|udp|hold PORT ...\n";
}
