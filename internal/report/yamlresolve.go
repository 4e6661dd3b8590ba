package report

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// What yaml.v2 decides about text, outside the emitter: the order of map
// keys, and which strings would read back as something else unquoted.

// yamlKeyLess is yaml.v2's order of string map keys: letters by code
// point, runs of digits by value, letters after other characters.
func yamlKeyLess(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return keyLess([]byte(a), []byte(b), isASCIILetter, isASCIIDigit)
	}
	return keyLess([]rune(a), []rune(b), unicode.IsLetter, unicode.IsDigit)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isASCIIDigit(c byte) bool  { return c >= '0' && c <= '9' }

// keyLess is yaml.v2's comparison on runes, or on bytes for ASCII keys,
// where the two are the same.
func keyLess[C rune | byte](ar, br []C, isLetter, isDigit func(C) bool) bool {
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al, bl := isLetter(ar[i]), isLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && isDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		ai, bi := i, i
		for ; ai < len(ar) && isDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for ; bi < len(br) && isDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}

// yamlSpecial are the plain scalars YAML 1.1 reads as something other than
// a string (booleans, null, special floats, the merge key).
var yamlSpecial = map[string]bool{}

func init() {
	for _, s := range strings.Fields(`y Y yes Yes YES true True TRUE on On ON n N no No NO
		false False FALSE off Off OFF ~ null Null NULL .nan .NaN .NAN .inf .Inf .INF
		+.inf +.Inf +.INF -.inf -.Inf -.INF <<`) {
		yamlSpecial[s] = true
	}
}

var (
	yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	base60Float    = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)
)

// plainResolvesToString reports whether yaml.v2 would read s, unquoted,
// back as a string (its resolve function); if not, s is double-quoted.
func plainResolvesToString(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c == '.':
		if yamlSpecial[s] {
			return false
		}
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		return !resolvesToNumberOrTime(s)
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		return !yamlSpecial[s]
	}
	return true
}

// resolvesToNumberOrTime follows resolve for text starting with a digit or
// a sign.
func resolvesToNumberOrTime(s string) bool {
	if yamlSpecial[s] || isYAMLTimestamp(s) {
		return true
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return true
	}
	if yamlStyleFloat.MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(plain, "0b"); ok {
		if _, err := strconv.ParseInt(rest, 2, 64); err == nil {
			return true
		}
		_, err := strconv.ParseUint(rest, 2, 64)
		return err == nil
	}
	if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
		_, err := strconv.ParseInt("-"+rest, 2, 64)
		return err == nil
	}
	return false
}

var yamlTimestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isYAMLTimestamp reports whether yaml.v2 reads s as a timestamp.
func isYAMLTimestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, f := range yamlTimestampFormats {
		if _, err := time.Parse(f, s); err == nil {
			return true
		}
	}
	return false
}

// isBase60Float reports whether yaml.v2 quotes s as a YAML 1.1 base 60
// number.
func isBase60Float(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !(c == '+' || c == '-' || c >= '0' && c <= '9') || strings.IndexByte(s, ':') < 0 {
		return false
	}
	return base60Float.MatchString(s)
}
