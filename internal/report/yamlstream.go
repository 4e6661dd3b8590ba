package report

import (
	"bufio"
	"io"
	"runtime"
	"sync"
)

// yamlChunk is how many objects one goroutine of writeYAMLDocs renders at
// a time: for generated HTTPRoutes and Services about 40 KB of YAML.
const yamlChunk = 64

// yamlDocsChunk is a run of objects, objs[start:end], rendered into out by
// a worker; done is closed when out (or err) is set.
type yamlDocsChunk struct {
	start, end int
	out        []byte
	err        error
	done       chan struct{}
}

// writeYAMLDocs writes each of objs as a YAML document, "---" before each,
// in order: the bytes YAMLEncoder gives one after the other. With more than
// one worker and more than one chunk of objects, workers render chunks of
// yamlChunk objects side by side, each with its own encoder, while the
// caller writes them in order; at most 2×workers chunks are rendered ahead
// of the one being written. `gwdev check -o yaml` on 10,000 HTTPRoutes
// spent a fifth of its time rendering on one core while the other idled.
func writeYAMLDocs(w io.Writer, objs []any, workers int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if workers <= 1 || len(objs) <= yamlChunk {
		var enc YAMLEncoder
		for _, obj := range objs {
			b, err := enc.Encode(obj)
			if err != nil {
				return err
			}
			if _, err := bw.WriteString("---\n"); err != nil {
				return err
			}
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
	quit := make(chan struct{})
	jobs := make(chan *yamlDocsChunk)
	queue := make(chan *yamlDocsChunk, 2*workers) // in order, rendered or not
	spare := make(chan []byte, 3*workers)         // written chunks' buffers
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // hands out the chunks in order
		defer wg.Done()
		defer close(queue)
		defer close(jobs)
		for start := 0; start < len(objs); start += yamlChunk {
			c := &yamlDocsChunk{start: start, end: min(start+yamlChunk, len(objs)), done: make(chan struct{})}
			select {
			case queue <- c:
			case <-quit:
				return
			}
			select {
			case jobs <- c:
			case <-quit:
				return
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var enc YAMLEncoder
			for c := range jobs {
				select {
				case c.out = <-spare:
				default:
				}
				c.out, c.err = renderYAMLDocs(&enc, c.out[:0], objs[c.start:c.end])
				close(c.done)
			}
		}()
	}
	var err error
	for c := range queue {
		<-c.done
		if err = c.err; err == nil {
			_, err = bw.Write(c.out)
		}
		if err != nil {
			break
		}
		select {
		case spare <- c.out:
		default:
		}
	}
	close(quit)
	for range queue { // let the dispatcher finish
	}
	wg.Wait()
	if err != nil {
		return err
	}
	return bw.Flush()
}

// renderYAMLDocs appends the documents of objs to out.
func renderYAMLDocs(enc *YAMLEncoder, out []byte, objs []any) ([]byte, error) {
	for _, obj := range objs {
		b, err := enc.Encode(obj)
		if err != nil {
			return out, err
		}
		out = append(out, "---\n"...)
		out = append(out, b...)
	}
	return out, nil
}

// yamlWorkers is how many goroutines render check's objects.
func yamlWorkers() int { return runtime.GOMAXPROCS(0) }
