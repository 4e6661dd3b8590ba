package tui

import (
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/gwdev/gwdev/internal/app"
)

// Options configure the dashboard. The zero value is usable.
type Options struct {
	// Dir is the watched folder, shown in the header ("" : ".").
	Dir string
	// Now is the clock for the request rate (nil: time.Now).
	Now func() time.Time
	// Renderer renders the styles (nil: lipgloss's default renderer, which
	// detects the terminal's colours). See NewRenderer.
	Renderer *lipgloss.Renderer
	// NoColor drops every colour from the styles (set it when NO_COLOR is).
	NoColor bool
	// Clipboard receives OSC 52 sequences when a request is copied as curl,
	// normally the terminal (nil: the command is only shown).
	Clipboard io.Writer
	// SystemClipboard puts text on the system clipboard (xclip, wl-copy,
	// pbcopy…) and fails when there is none (nil: none); it is tried before
	// OSC 52, and only its success is reported as "copied".
	SystemClipboard func(string) error
	// Admin says where the admin API serves, or why it does not ("" : not
	// shown); AdminProblem marks it as a problem (the address asked for was
	// taken, or it is off) and the dashboard says so from the start.
	Admin        string
	AdminProblem bool
	// Client sends replayed requests (nil: a client that follows no
	// redirects and uses no proxy).
	Client *http.Client
	// TraceLimit is how many traces the Traces view keeps (0: 1000).
	TraceLimit int
	// CAFiles are CA bundles (PEM) that a request copied as a command over
	// TLS verifies the server with (curl --cacert, grpcurl -cacert, openssl
	// -CAfile): the first one that the listener's certificate chains to for
	// the name the client sent, read when the request is copied (nil: none;
	// the command then verifies with the system's roots when they do, and
	// skips verification, curl -k, otherwise).
	CAFiles []string
	// SystemRoots are the roots a certificate no CA file verifies is tried
	// against (nil: x509.SystemCertPool).
	SystemRoots func() (*x509.CertPool, error)
}

// The views, in tab order.
const (
	viewOverview = iota
	viewRoutes
	viewProblems
	viewTraces
	viewDetail
	viewGraph
	viewMigration
	viewTests
	numViews
)

// view is what every dashboard view implements: a tea.Model with a size,
// a filter and help.
type view interface {
	tea.Model
	help.KeyMap
	SetSize(w, h int)
	SetFilter(string)
	filterText() string
	title() string
	// count is shown next to the tab title (0: nothing).
	count() int
	// position is shown in the status line, e.g. "3/10" ("" : nothing).
	position() string
}

// Compile-time checks that every view is one.
var (
	_ view = (*overviewView)(nil)
	_ view = (*routesView)(nil)
	_ view = (*problemsView)(nil)
	_ view = (*tracesView)(nil)
	_ view = (*detailView)(nil)
)

// optional is implemented by views that are a tab only sometimes (the
// Migration view: when the folder has Ingresses).
type optional interface{ available() bool }

var _ optional = (*migrationView)(nil)

// shown reports whether view i is a tab now.
func (m *Model) shown(i int) bool {
	o, ok := m.views[i].(optional)
	return !ok || o.available()
}

// Model is the dashboard's root: it owns the session, lays out the frame
// (header, tabs, body, status line, help) and routes messages to views.
type Model struct {
	c      *common
	views  [numViews]view
	active int
	w, h   int

	filter    textinput.Model
	filtering bool
	help      help.Model
	showHelp  bool

	status    statusMsg
	statusGen int

	// after schedules a timer's message (tea.Tick; a test's model has no
	// timers, the test sends their messages by hand).
	after func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
}

// statusExpiredMsg clears the status line message numbered gen.
type statusExpiredMsg struct{ gen int }

// tickMsg refreshes the request rate once a second.
type tickMsg struct{}

// statusFor is how long a status message stays.
const statusFor = 8 * time.Second

// New returns the dashboard. Feed it with Program.Send: the Session's
// *app.State after each reload, app.MigrationState, TracesMsg (see ForwardTraces), WatchErrorMsg, NoticeMsg.
func New(opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Dir == "" {
		opts.Dir = "."
	}
	r := opts.Renderer
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	if opts.SystemRoots == nil {
		opts.SystemRoots = x509.SystemCertPool
	}
	if opts.Client == nil {
		opts.Client = newReplayClient()
	}
	c := &common{s: newSession(opts.Dir, opts.Now), keys: newKeyMap(), st: newStyles(r, opts.NoColor)}
	c.s.admin, c.s.adminProblem = opts.Admin, opts.AdminProblem
	m := &Model{c: c, help: help.New(), filter: textinput.New(), after: tea.Tick}
	m.help.Styles = c.st.Help
	m.filter.Prompt = "/"
	m.filter.PromptStyle = c.st.FilterPrompt
	m.filter.Cursor.SetMode(cursor.CursorStatic)
	m.filter.Cursor.Style = c.st.Selected
	m.views = [numViews]view{
		newOverviewView(c),
		newRoutesView(c),
		newProblemsView(c),
		newTracesView(c, opts.TraceLimit, &requester{clipboard: opts.Clipboard, system: opts.SystemClipboard, client: opts.Client,
			trust: trustChecker{caFiles: opts.CAFiles, systemRoots: opts.SystemRoots, now: time.Now}}),
		newDetailView(c),
		newGraphView(c),
		newMigrationView(c),
		newTestsView(c),
	}
	return m
}

// Init starts the once-a-second refresh of the request rate.
func (m *Model) Init() tea.Cmd { return m.tick() }

func (m *Model) tick() tea.Cmd {
	return m.after(time.Second, func(time.Time) tea.Msg { return tickMsg{} })
}

// Update routes a message: frame messages are handled here, the session
// is updated for new states and traces, everything else goes to views.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case *app.State:
		return m, m.applyState(msg)
	case TracesMsg:
		m.c.s.countTraces(msg)
		cmd := m.send(viewTraces, msg)
		msg.release() // the traces are copied out: ForwardTraces reuses the array
		return m, cmd
	case WatchErrorMsg:
		return m, m.setStatus(statusMsg{text: "watch: " + msg.Err.Error(), isErr: true})
	case NoticeMsg:
		return m, m.setStatus(statusMsg{text: msg.Text, isErr: msg.Problem})
	case statusMsg:
		return m, m.setStatus(msg)
	case statusExpiredMsg:
		if msg.gen == m.statusGen {
			m.status = statusMsg{}
		}
	case flashDoneMsg:
		if msg.gen == m.c.s.flashGen {
			m.c.s.flashing = false
			return m, m.broadcast(refreshMsg{})
		}
	case tickMsg:
		return m, m.tick()
	case app.MigrationState:
		return m, m.send(viewMigration, msg)
	case app.TestsState:
		return m, m.send(viewTests, msg)
	case showObjectMsg:
		m.switchTo(viewDetail)
		return m, m.send(viewDetail, msg)
	case tea.KeyMsg:
		return m, m.handleKey(msg)
	}
	return m, nil
}

// applyState digests a new state, refreshes every view and starts the
// highlight of what changed.
func (m *Model) applyState(msg *app.State) tea.Cmd {
	s := m.c.s
	changed := s.apply(msg)
	var cmds []tea.Cmd
	if changed {
		s.flashing = true
		s.flashGen++
		gen := s.flashGen
		cmds = append(cmds, m.after(flashFor, func(time.Time) tea.Msg { return flashDoneMsg{gen: gen} }))
	}
	cmds = append(cmds, m.broadcast(refreshMsg{}))
	return tea.Batch(cmds...)
}

func (m *Model) setStatus(msg statusMsg) tea.Cmd {
	m.status = msg
	m.statusGen++
	gen := m.statusGen
	return m.after(statusFor, func(time.Time) tea.Msg { return statusExpiredMsg{gen: gen} })
}

// send delivers msg to one view.
func (m *Model) send(i int, msg tea.Msg) tea.Cmd {
	v, cmd := m.views[i].Update(msg)
	m.views[i] = v.(view)
	return cmd
}

// broadcast delivers msg to every view.
func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, numViews)
	for i := range m.views {
		cmds = append(cmds, m.send(i, msg))
	}
	return tea.Batch(cmds...)
}

// frame lines: header, tabs, status line and help line.
const chromeLines = 4

func (m *Model) resize(w, h int) {
	m.w, m.h = w, h
	m.help.Width = w
	m.filter.Width = max(10, w-20)
	for _, v := range m.views {
		v.SetSize(w, max(1, h-chromeLines))
	}
}

// handleKey handles the global keys and passes the rest to the active
// view; while the filter is being typed, keys go to the filter input.
func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	if m.filtering {
		return m.filterKey(msg)
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case m.showHelp && (key.Matches(msg, k.Help) || key.Matches(msg, k.Back)):
		m.showHelp = false
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.Filter):
		m.filtering = true
		m.filter.SetValue(m.views[m.active].filterText())
		m.filter.CursorEnd()
		return m.filter.Focus()
	case key.Matches(msg, k.NextView):
		m.step(1)
	case key.Matches(msg, k.PrevView):
		m.step(-1)
	case key.Matches(msg, k.Migration) && m.shown(viewMigration):
		m.switchTo(viewMigration)
	case key.Matches(msg, k.Tests) && m.shown(viewTests):
		m.switchTo(viewTests)
	case key.Matches(msg, k.Views):
		m.switchTo(int(msg.String()[0] - '1'))
	default:
		return m.send(m.active, msg)
	}
	return nil
}

// step moves to the next (1) or previous (-1) view that is a tab.
func (m *Model) step(dir int) {
	i := m.active
	for range numViews {
		i = (i + dir + numViews) % numViews
		if m.shown(i) {
			break
		}
	}
	m.switchTo(i)
}

func (m *Model) switchTo(i int) {
	m.active = (i + numViews) % numViews
	m.showHelp = false
	m.showing()
}

// onScreen is implemented by views that skip work while hidden.
type onScreen interface{ setVisible(bool) }

var _ onScreen = (*tracesView)(nil)

// showing tells views whether they are on screen.
func (m *Model) showing() {
	for i, v := range m.views {
		if o, ok := v.(onScreen); ok {
			o.setVisible(i == m.active)
		}
	}
}

// filterKey edits the active view's filter; the view follows as you type.
func (m *Model) filterKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Apply):
		m.filtering = false
		m.filter.Blur()
		return nil
	case key.Matches(msg, k.Clear):
		m.filtering = false
		m.filter.Blur()
		m.filter.SetValue("")
		m.views[m.active].SetFilter("")
		return nil
	case msg.Type == tea.KeyCtrlC:
		return tea.Quit
	}
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	if v := m.views[m.active]; v.filterText() != strings.ToLower(m.filter.Value()) {
		v.SetFilter(m.filter.Value())
	}
	return cmd
}
