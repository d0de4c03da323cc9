// Sends N messages with the npm syslog-client package, one after another.
//   node 66-syslog-client.js PORT tcp|udp 3164|5424 N TAG
// RFC 3164 has no app-name in syslog-client: the message starts with
// "TAG[7]: " as BSD senders write it. Prints "sent N" when done.
'use strict';
const syslog = require('syslog-client');

const [port, transport, rfc, count, tag] = process.argv.slice(2);
const n = Number(count);
const is3164 = rfc === '3164';
const client = syslog.createClient('127.0.0.1', {
    port: Number(port),
    transport: transport === 'tcp' ? syslog.Transport.Tcp : syslog.Transport.Udp,
    rfc3164: is3164,
    appName: tag,
    syslogHostname: 'node-host',
    facility: syslog.Facility.Local2,
    severity: syslog.Severity.Warning,
});
client.on('error', (err) => {
    console.error('client error: ' + err.message);
    process.exit(1);
});

let i = 0;
function next() {
    if (i >= n) {
        client.close();
        console.log('sent ' + n);
        return;
    }
    const text = 'client message ' + i;
    const options = is3164 ? {} : { msgid: 'CM' };
    client.log(is3164 ? tag + '[7]: ' + text : text, options, (err) => {
        if (err) {
            console.error('log failed: ' + err.message);
            process.exit(1);
        }
        i++;
        // UDP has no flow control: a short pause now and then keeps the
        // datagrams within the socket buffer on a loaded machine
        if (transport === 'udp' && i % 50 === 0)
            setTimeout(next, 5);
        else
            next();
    });
}
next();
