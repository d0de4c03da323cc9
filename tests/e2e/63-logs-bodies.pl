#!/usr/bin/perl
# Writes the request body named by $ARGV[0] to stdout, for 63-logs-bad-input.t:
# Loki and OTLP protobuf bodies (good, truncated, bad varints, wrong wire
# types, nested too deep), snappy-framed or not. The protobuf and snappy
# encoders here are the few lines the tests need, from the two formats'
# specs: a snappy block of literals only is valid snappy.
use strict;
use warnings;

sub varint {
    my ($v) = @_;
    my $out = '';
    while ($v >= 0x80) {
        $out .= chr(($v & 0x7f) | 0x80);
        $v >>= 7;
    }
    return $out . chr($v);
}

sub key { my ($num, $wire) = @_; return varint(($num << 3) | $wire); }
sub len_field { my ($num, $bytes) = @_; return key($num, 2) . varint(length $bytes) . $bytes; }
sub varint_field { my ($num, $v) = @_; return key($num, 0) . varint($v); }
sub fixed64_field { my ($num, $v) = @_; return key($num, 1) . pack('Q<', $v); }

# snappy: uncompressed length, then literal runs of at most 60 bytes
sub snappy {
    my ($data) = @_;
    my $out = varint(length $data);
    for (my $i = 0; $i < length $data; $i += 60) {
        my $chunk = substr($data, $i, 60);
        $out .= chr((length($chunk) - 1) << 2) . $chunk;
    }
    return $out;
}

sub loki_entry {
    my ($sec, $line) = @_;
    my $ts = varint_field(1, $sec) . varint_field(2, 500);
    my $meta = len_field(1, 'trace') . len_field(2, 'abc');
    return len_field(1, $ts) . len_field(2, $line) . len_field(3, $meta);
}

sub loki_push {
    my (@entries) = @_;
    my $stream = len_field(1, '{job="bad-input", host="h1", a="x\\"y"}');
    $stream .= len_field(2, $_) for @entries;
    return len_field(1, $stream);
}

sub any_string { return len_field(1, $_[0]); }
sub kv { my ($k, $any) = @_; return len_field(1, $k) . len_field(2, $any); }

sub otlp_record {
    my ($ns, $body, @attrs) = @_;
    my $r = fixed64_field(1, $ns) . varint_field(2, 9) . len_field(5, any_string($body));
    $r .= len_field(6, $_) for @attrs;
    return $r;
}

sub otlp_request {
    my (@records) = @_;
    my $res = len_field(1, kv('service.name', any_string('svc')) . '');
    my $scope = '';
    $scope .= len_field(2, $_) for @records;
    return len_field(1, len_field(1, $res) . len_field(2, $scope));
}

my %bodies;
my $good_loki = loki_push(loki_entry(1700000000, 'good one'), loki_entry(1700000001, 'good two'));
$bodies{loki_good} = snappy($good_loki);
$bodies{loki_good_raw} = $good_loki;
$bodies{loki_truncated} = snappy(substr($good_loki, 0, length($good_loki) - 5));
$bodies{loki_badvarint} = snappy(key(1, 2) . ("\xff" x 11));
$bodies{loki_wiretype} = snappy(varint_field(1, 7));
$bodies{loki_group} = snappy(key(1, 3) . key(1, 4));
$bodies{loki_badsnappy} = "\x0a\xf0\x00garbage that is not snappy";
$bodies{loki_snappybomb} = varint(1 << 31) . "\x00a";
$bodies{loki_badlabels} = snappy(len_field(1, len_field(1, '{job=unquoted}') .
                                         len_field(2, loki_entry(1700000000, 'x'))));
# one entry with invalid UTF-8 in its line: refused, the other stored
$bodies{loki_partial} = snappy(loki_push(loki_entry(1700000002, "bad \xff\xfe line"),
                                         loki_entry(1700000003, 'good three')));

my $good_otlp = otlp_request(otlp_record(1700000000000000000, 'otlp good',
                                         kv('k', any_string('v'))));
$bodies{otlp_good} = $good_otlp;
$bodies{otlp_truncated} = substr($good_otlp, 0, length($good_otlp) - 3);
$bodies{otlp_badvarint} = key(1, 2) . ("\x80" x 10) . "\x02";
# time_unix_nano (fixed64) sent as a varint
$bodies{otlp_wiretype} = otlp_request(varint_field(1, 5) . len_field(5, any_string('x')));
my $deep = any_string('leaf');
$deep = len_field(5, len_field(1, $deep)) for 1 .. 40;
$bodies{otlp_deep} = otlp_request(fixed64_field(1, 1) . len_field(5, $deep));
# one record with an attribute key that is not UTF-8: refused, the other kept
$bodies{otlp_partial} = otlp_request(otlp_record(1700000000000000001, 'otlp kept'),
                                     otlp_record(1700000000000000002, 'otlp refused',
                                                 kv("bad\xffkey", any_string('v'))));

my $name = $ARGV[0] // '';
die "unknown body $name\n" unless exists $bodies{$name};
binmode STDOUT;
print $bodies{$name};
