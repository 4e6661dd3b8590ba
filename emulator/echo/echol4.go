package echo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
)

// The echo backend of TCPRoute and UDPRoute traffic speaks what the Gateway
// API conformance suite's backends speak, and stays an echo for a person
// with nc:
//
//   - TCP (and TLSRoute streams, echotls.go): the greeting line of the
//     conformance TCP echo server (echo-basic tcpserver), then one answer per
//     line: PING → PONG, IS_TLS → true/false, TEST → a JSON description of
//     the connection (namespace, service, pod, ports, TLS). Any other line,
//     and a last line without a newline, comes back byte for byte.
//   - UDP: one JSON datagram per datagram, like the conformance UDP echo
//     server (echo-basic udpechoserver): {"request": what was sent,
//     "namespace", "ingress", "service", "pod"}. A datagram that is a DNS
//     query is answered like CoreDNS's whoami plugin (the suite's UDPRoute
//     backend): the query's name resolves to the client's address.

// LineLimit is the longest line the TCP echo reads as one; a longer
// one is echoed in pieces of this size (and is never a command).
const LineLimit = 64 << 10

// echoLines answers the TCP echo protocol on conn after the greeting: test
// is the JSON answer to TEST and isTLS the answer to IS_TLS. It returns when
// the client half-closes or the connection fails, with the number of bytes
// it sent back unchanged (everything but commands and their answers).
// first, when set, sees the first line (or piece of one) the client sent.
func echoLines(conn io.ReadWriter, test []byte, isTLS bool, first func(line []byte)) (echoed int64, err error) {
	r := bufio.NewReaderSize(conn, LineLimit)
	w := bufio.NewWriter(conn)
	for {
		line, rerr := r.ReadSlice('\n')
		if first != nil && len(line) > 0 {
			first(line)
			first = nil
		}
		if len(line) > 0 {
			answer, isCommand := echoCommand(line, test, isTLS)
			if !isCommand || rerr != nil {
				answer = line
				echoed += int64(len(line))
			}
			if _, err := w.Write(answer); err != nil {
				return echoed, err
			}
		}
		if rerr == nil || errors.Is(rerr, bufio.ErrBufferFull) {
			if r.Buffered() == 0 {
				if err := w.Flush(); err != nil {
					return echoed, err
				}
			}
			continue
		}
		if ferr := w.Flush(); ferr != nil {
			return echoed, ferr
		}
		if errors.Is(rerr, io.EOF) {
			return echoed, nil
		}
		return echoed, rerr
	}
}

// echoCommand answers one complete line of the TCP echo protocol (false:
// the line is not a command and is echoed). A trailing "\r\n" is a line end
// too, as for the conformance server (bufio.ScanLines).
func echoCommand(line, test []byte, isTLS bool) ([]byte, bool) {
	cmd, ok := bytes.CutSuffix(line, []byte("\n"))
	if !ok {
		return nil, false
	}
	cmd, _ = bytes.CutSuffix(cmd, []byte("\r"))
	switch string(cmd) {
	case "PING":
		return []byte("PONG\n"), true
	case "IS_TLS":
		return []byte(strconv.FormatBool(isTLS) + "\n"), true
	case "TEST":
		return append(append([]byte(nil), test...), '\n'), true
	}
	return nil, false
}

// UDPResponse is the conformance UDP echo server's answer.
type UDPResponse struct {
	Request   string `json:"request"`
	Namespace string `json:"namespace"`
	Ingress   string `json:"ingress"`
	Service   string `json:"service"`
	Pod       string `json:"pod"`
}

// UDPAnswer is the echo backend's answer to one datagram from client:
// a DNS whoami answer to a DNS query, else the JSON echo.
func (e *Target) UDPAnswer(b []byte, ingress string, client net.Addr) []byte {
	if a := dnsWhoami(b, client); a != nil {
		return a
	}
	out, err := json.Marshal(UDPResponse{Request: string(b), Namespace: e.namespace, Ingress: ingress,
		Service: e.service, Pod: e.pod})
	if err != nil {
		return b
	}
	return out
}

// DNS message constants (RFC 1035, RFC 2782, RFC 6891).
const (
	dnsHeaderLen = 12
	dnsTypeA     = 1
	dnsTypeSRV   = 33
	dnsTypeAAAA  = 28
	dnsTypeOPT   = 41
	dnsClassIN   = 1
	dnsFlagQR    = 0x8000
	dnsFlagAA    = 0x0400
	dnsFlagRD    = 0x0100
)

// dnsWhoami answers a standard DNS query (one question, no answers, at
// most an EDNS OPT record) the way CoreDNS's whoami plugin does: no answer
// records; the additional section holds the client's address as an A or
// AAAA record of the queried name and its port as an SRV record of
// _udp.<name>. Anything else is not a DNS query: nil.
func dnsWhoami(q []byte, client net.Addr) []byte {
	if len(q) < dnsHeaderLen {
		return nil
	}
	flags := uint16(q[2])<<8 | uint16(q[3])
	if flags&dnsFlagQR != 0 || (flags>>11)&0xF != 0 || be16(q[4:]) != 1 || be16(q[6:]) != 0 || be16(q[8:]) != 0 || be16(q[10:]) > 1 {
		return nil
	}
	end, ok := dnsQuestionEnd(q)
	if !ok {
		return nil
	}
	if be16(q[10:]) == 0 && end != len(q) {
		return nil
	}
	if be16(q[10:]) == 1 && (len(q) < end+3 || q[end] != 0 || be16(q[end+1:]) != dnsTypeOPT) {
		return nil
	}
	ua, _ := client.(*net.UDPAddr)
	if ua == nil {
		return nil
	}
	out := make([]byte, 0, end+64)
	out = append(out, q[0], q[1])
	out = put16(out, dnsFlagQR|dnsFlagAA|flags&dnsFlagRD)
	out = put16(out, 1) // questions
	out = put16(out, 0) // answers
	out = put16(out, 0) // authority
	out = put16(out, 2) // additional: the address and the port
	out = append(out, q[dnsHeaderLen:end]...)
	const qname = 0xC000 | dnsHeaderLen // a pointer to the question's name
	out = put16(out, qname)
	if ip4 := ua.IP.To4(); ip4 != nil {
		out = dnsRecordHeader(out, dnsTypeA, 4)
		out = append(out, ip4...)
	} else {
		out = dnsRecordHeader(out, dnsTypeAAAA, 16)
		out = append(out, ua.IP.To16()...)
	}
	out = append(out, 4, '_', 'u', 'd', 'p')
	out = put16(out, qname)
	out = dnsRecordHeader(out, dnsTypeSRV, 7)
	out = put16(out, 0) // priority
	out = put16(out, 0) // weight
	out = put16(out, uint16(ua.Port))
	return append(out, 0) // target: the root
}

// dnsQuestionEnd returns the offset after the single question of q.
func dnsQuestionEnd(q []byte) (int, bool) {
	i := dnsHeaderLen
	for {
		if i >= len(q) {
			return 0, false
		}
		n := int(q[i])
		if n == 0 {
			i++
			break
		}
		if n > 63 || i-dnsHeaderLen+n+1 > 255 {
			return 0, false // a compression pointer or a bad label
		}
		i += n + 1
	}
	if i+4 > len(q) {
		return 0, false
	}
	return i + 4, true
}

// dnsRecordHeader appends type, class IN, TTL 0 and the data length of a
// resource record whose name was just written.
func dnsRecordHeader(out []byte, typ uint16, dataLen uint16) []byte {
	out = put16(out, typ)
	out = put16(out, dnsClassIN)
	out = append(out, 0, 0, 0, 0) // TTL
	return put16(out, dataLen)
}

func be16(b []byte) uint16 { return uint16(b[0])<<8 | uint16(b[1]) }

func put16(b []byte, v uint16) []byte { return append(b, byte(v>>8), byte(v)) }
