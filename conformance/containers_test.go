package conformance

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/internal/freeport"
)

// The containers of the conformance echo image (echo-basic) run as what
// they are in a cluster: upstream's echo-basic program
// (sigs.k8s.io/gateway-api-conformance-images/echo-basic, the version
// go.mod pins), one process per Pod, with the environment and mounted
// Secrets and ConfigMaps its Deployment gives it. gwdev reaches them the
// way it reaches a user's backend: through the EndpointSlices of their
// Services (endpoints_test.go), over a socket to <pod IP>:<container port>.
//
// echo-basic listens on ":<port>", every address of the machine, so two
// Pods cannot both have their port 3000 there. Each process therefore gets
// free ports on the host (its *_PORT variables rewritten), and the Pod's
// own address and port (<pod IP>:3000 …) forwards each connection or
// datagram to it byte for byte, as a cluster's Pod network would deliver
// it. A port the container does not listen on is not bound on the Pod
// IP, so a connection to it is refused (HTTPRouteRetryConnectionError).
// What a forwarder changes: the echo sees the forwarder's address as the
// client's, and reports the host port it listens on as httpPort (no test
// of v1.7.0 checks either).

// echoBasicBin is a prebuilt echo-basic (make conformance-apiserver builds
// it before the run, which has no network); echoBasicPath is the program
// the Pods run ("" until buildEchoBasic).
var echoBasicBin = flag.String("gwdev.echobasic", "", "a prebuilt echo-basic program (default: build sigs.k8s.io/gateway-api-conformance-images/echo-basic)")

var (
	echoBasicOnce sync.Once
	echoBasicPath string
	echoBasicErr  error
)

// buildEchoBasic builds upstream's echo-basic into a temporary directory,
// once per process.
func buildEchoBasic(t testing.TB) (string, error) {
	echoBasicOnce.Do(func() {
		if *echoBasicBin != "" {
			echoBasicPath, echoBasicErr = filepath.Abs(*echoBasicBin)
			return
		}
		dir, err := os.MkdirTemp("", "gwdev-echo-basic-")
		if err != nil {
			echoBasicErr = err
			return
		}
		path := filepath.Join(dir, "echo-basic")
		cmd := exec.Command("go", "build", "-o", path, "sigs.k8s.io/gateway-api-conformance-images/echo-basic")
		out, err := cmd.CombinedOutput()
		if err != nil {
			echoBasicErr = fmt.Errorf("building echo-basic: %v\n%s", err, out)
			return
		}
		echoBasicPath = path
	})
	return echoBasicPath, echoBasicErr
}

// container is one running echo-basic process of a Pod and the Pod-IP
// listeners that forward to it.
type container struct {
	name string
	cmd  *exec.Cmd
	dir  string
	log  *echosrv.Log
	// fwd are the Pod IP's listeners (net.Listener or *net.UDPConn).
	fwd  []io.Closer
	done chan struct{}
}

// listenPort is a port echo-basic listens on: the variable that sets it,
// its default and whether it is UDP.
type listenPort struct {
	env  string
	port int
	udp  bool
}

// echoBasicPorts are the ports echo-basic listens on with environment env,
// read as its main does: GRPC_ECHO_SERVER, TCP_ECHO_SERVER and
// UDP_ECHO_SERVER select the gRPC, TCP and UDP servers, else HTTP (plain,
// h2c, and HTTPS when a certificate and key are given).
func echoBasicPorts(env map[string]string) ([]listenPort, error) {
	port := func(name string, def int, udp bool) (listenPort, error) {
		p := listenPort{env: name, port: def, udp: udp}
		if v := env[name]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return p, fmt.Errorf("%s=%q is not a port", name, v)
			}
			p.port = n
		}
		return p, nil
	}
	var specs []listenPort
	add := func(name string, def int, udp bool) error {
		p, err := port(name, def, udp)
		specs = append(specs, p)
		return err
	}
	var err error
	switch {
	case env["GRPC_ECHO_SERVER"] != "":
		err = add("HTTP_PORT", 3000, false)
		if err == nil && env["TLS_SERVER_CERT"] != "" && env["TLS_SERVER_PRIV_KEY"] != "" {
			err = add("HTTPS_PORT", 8443, false)
		}
	case env["TCP_ECHO_SERVER"] != "":
		err = add("TCP_PORT", 3000, false)
		if err == nil && env["TLS_SERVER_CERT"] != "" && env["TLS_SERVER_PRIV_KEY"] != "" {
			err = add("TLS_PORT", 8443, false)
		}
	case env["UDP_ECHO_SERVER"] != "":
		err = add("UDP_PORT", 8080, true)
	default:
		err = errors.Join(add("HTTP_PORT", 3000, false), add("H2C_PORT", 3001, false))
		if err == nil && env["TLS_SERVER_CERT"] != "" && env["TLS_SERVER_PRIVKEY"] != "" {
			err = add("HTTPS_PORT", 8443, false)
		}
	}
	return specs, err
}

// containerEnv resolves a container's environment as the kubelet does:
// literal values, the Pod's fields, and keys of Secrets and ConfigMaps.
func containerEnv(ctx context.Context, api client.Client, pod *corev1.Pod, c *corev1.Container) (map[string]string, error) {
	env := map[string]string{}
	for _, e := range c.Env {
		switch vf := e.ValueFrom; {
		case vf == nil:
			env[e.Name] = e.Value
		case vf.FieldRef != nil:
			switch vf.FieldRef.FieldPath {
			case "metadata.name":
				env[e.Name] = pod.Name
			case "metadata.namespace":
				env[e.Name] = pod.Namespace
			case "status.podIP":
				env[e.Name] = pod.Status.PodIP
			case "spec.nodeName":
				env[e.Name] = pod.Spec.NodeName
			default:
				return nil, fmt.Errorf("env %s: fieldRef %s is not served by the harness", e.Name, vf.FieldRef.FieldPath)
			}
		case vf.SecretKeyRef != nil:
			var s corev1.Secret
			if err := api.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: vf.SecretKeyRef.Name}, &s); err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			env[e.Name] = string(s.Data[vf.SecretKeyRef.Key])
		case vf.ConfigMapKeyRef != nil:
			var cm corev1.ConfigMap
			if err := api.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: vf.ConfigMapKeyRef.Name}, &cm); err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			env[e.Name] = cm.Data[vf.ConfigMapKeyRef.Key]
		default:
			return nil, fmt.Errorf("env %s: valueFrom not served by the harness", e.Name)
		}
	}
	return env, nil
}

// mountVolumes writes the Secret and ConfigMap volumes c mounts under dir
// and rewrites env values that name a path under a mount to the written
// file, as a container would see the mounted file at that path.
func mountVolumes(ctx context.Context, api client.Client, pod *corev1.Pod, c *corev1.Container, dir string, env map[string]string) error {
	for _, m := range c.VolumeMounts {
		var vol *corev1.Volume
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == m.Name {
				vol = &pod.Spec.Volumes[i]
			}
		}
		if vol == nil {
			return fmt.Errorf("volume %s not found", m.Name)
		}
		data := map[string][]byte{}
		var items []corev1.KeyToPath
		switch {
		case vol.Secret != nil:
			var s corev1.Secret
			if err := api.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: vol.Secret.SecretName}, &s); err != nil {
				return fmt.Errorf("volume %s: %w", m.Name, err)
			}
			data, items = s.Data, vol.Secret.Items
		case vol.ConfigMap != nil:
			var cm corev1.ConfigMap
			if err := api.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: vol.ConfigMap.Name}, &cm); err != nil {
				return fmt.Errorf("volume %s: %w", m.Name, err)
			}
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
			items = vol.ConfigMap.Items
		default:
			return fmt.Errorf("volume %s: only Secret and ConfigMap volumes are served by the harness", m.Name)
		}
		if len(items) == 0 {
			for k := range data {
				items = append(items, corev1.KeyToPath{Key: k, Path: k})
			}
		}
		root := filepath.Join(dir, "volumes", m.Name)
		for _, it := range items {
			p := filepath.Join(root, filepath.Clean("/"+it.Path))
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(p, data[it.Key], 0o600); err != nil {
				return err
			}
		}
		mount := strings.TrimSuffix(m.MountPath, "/")
		for k, v := range env {
			if v == mount || strings.HasPrefix(v, mount+"/") {
				env[k] = root + strings.TrimPrefix(v, mount)
			}
		}
	}
	return nil
}

// startContainer runs echo-basic as container c of pod (bound to its pod
// IP) and returns once each of its ports answers.
func startContainer(ctx context.Context, t testing.TB, api client.Client, pod *corev1.Pod, c *corev1.Container) (*container, error) {
	bin, err := buildEchoBasic(t)
	if err != nil {
		return nil, err
	}
	env, err := containerEnv(ctx, api, pod, c)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gwdev-pod-"+pod.Name+"-")
	if err != nil {
		return nil, err
	}
	ct := &container{name: c.Name, dir: dir, log: &echosrv.Log{}, done: make(chan struct{})}
	fail := func(err error) (*container, error) {
		ct.stop()
		return nil, fmt.Errorf("container %s of Pod %s/%s: %w", c.Name, pod.Namespace, pod.Name, err)
	}
	if err := mountVolumes(ctx, api, pod, c, dir, env); err != nil {
		return fail(err)
	}
	ports, err := echoBasicPorts(env)
	if err != nil {
		return fail(err)
	}
	host := make([]int, len(ports))
	for i, p := range ports {
		if p.udp {
			host[i] = freeport.UDP(t, "0.0.0.0")
		} else {
			host[i] = freeport.TCP(t, "0.0.0.0")
		}
		env[p.env] = strconv.Itoa(host[i])
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	ct.cmd = cmd
	listening := make(chan struct{}, 1)
	go func() {
		defer close(ct.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			ct.log.Add(line)
			if strings.Contains(line, "listening") {
				select {
				case listening <- struct{}{}:
				default:
				}
			}
		}
		_ = cmd.Wait()
	}()
	deadline := time.Now().Add(20 * time.Second)
	for i, p := range ports {
		if p.udp {
			select {
			case <-listening:
			case <-ct.done:
				return fail(errors.New("echo-basic exited: " + strings.Join(ct.log.Since(time.Time{}), "\n")))
			case <-time.After(time.Until(deadline)):
				return fail(errors.New("echo-basic's UDP server did not start"))
			}
			fwd, err := forwardUDP(pod.Status.PodIP, p.port, host[i])
			if err != nil {
				return fail(err)
			}
			ct.fwd = append(ct.fwd, fwd)
			continue
		}
		target := net.JoinHostPort("127.0.0.1", strconv.Itoa(host[i]))
		for {
			c, err := net.DialTimeout("tcp", target, time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-ct.done:
				return fail(errors.New("echo-basic exited: " + strings.Join(ct.log.Since(time.Time{}), "\n")))
			default:
			}
			if time.Now().After(deadline) {
				return fail(fmt.Errorf("echo-basic does not listen on %s: %w", target, err))
			}
			time.Sleep(20 * time.Millisecond)
		}
		fwd, err := forwardTCP(pod.Status.PodIP, p.port, target)
		if err != nil {
			return fail(err)
		}
		ct.fwd = append(ct.fwd, fwd)
	}
	return ct, nil
}

// stop closes the Pod IP's listeners and kills the process.
func (c *container) stop() {
	for _, f := range c.fwd {
		_ = f.Close()
	}
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
		}
	}
	_ = os.RemoveAll(c.dir)
}

// forwardTCP listens on ip:port and splices each connection to target.
// A reset from the target (echo-basic's /retry/ drops a connection with
// SO_LINGER 0) is passed on as a reset.
func forwardTCP(ip string, port int, target string) (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go splice(c.(*net.TCPConn), target)
		}
	}()
	return ln, nil
}

func splice(in *net.TCPConn, target string) {
	defer in.Close()
	out, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		_ = in.SetLinger(0) // the container is gone: reset, as a closed port would
		return
	}
	up := out.(*net.TCPConn)
	defer up.Close()
	var wg sync.WaitGroup
	copyHalf := func(dst, src *net.TCPConn) {
		defer wg.Done()
		_, err := io.Copy(dst, src)
		if errors.Is(err, syscall.ECONNRESET) {
			_ = dst.SetLinger(0)
			_ = dst.Close()
			_ = src.Close()
			return
		}
		_ = dst.CloseWrite()
	}
	wg.Add(2)
	go copyHalf(up, in)
	go copyHalf(in, up)
	wg.Wait()
}

// udpForwarder relays datagrams between clients of ip:port and target, one
// socket to target per client address.
type udpForwarder struct {
	conn *net.UDPConn
	mu   sync.Mutex
	peer map[string]*net.UDPConn
}

func forwardUDP(ip string, port, hostPort int) (io.Closer, error) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(ip), Port: port})
	if err != nil {
		return nil, err
	}
	f := &udpForwarder{conn: conn, peer: map[string]*net.UDPConn{}}
	target := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: hostPort}
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, from, err := conn.ReadFromUDP(buf)
			if err != nil {
				return
			}
			f.mu.Lock()
			up := f.peer[from.String()]
			if up == nil {
				up, err = net.DialUDP("udp", nil, target)
				if err != nil {
					f.mu.Unlock()
					continue
				}
				f.peer[from.String()] = up
				go func(up *net.UDPConn, client *net.UDPAddr) {
					b := make([]byte, 64<<10)
					for {
						_ = up.SetReadDeadline(time.Now().Add(2 * time.Minute))
						n, err := up.Read(b)
						if err != nil {
							f.mu.Lock()
							delete(f.peer, client.String())
							f.mu.Unlock()
							_ = up.Close()
							return
						}
						_, _ = conn.WriteToUDP(b[:n], client)
					}
				}(up, from)
			}
			f.mu.Unlock()
			_, _ = up.Write(buf[:n])
		}
	}()
	return f, nil
}

func (f *udpForwarder) Close() error {
	err := f.conn.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, up := range f.peer {
		_ = up.Close()
	}
	return err
}
