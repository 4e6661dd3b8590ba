package auth

import (
	"crypto/md5"  //nolint:gosec // Apache's $apr1$ htpasswd format is MD5 by definition
	"crypto/sha1" //nolint:gosec // the {SHA} htpasswd format is SHA-1 by definition
	"crypto/subtle"
	"encoding/base64"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/gwdev/gwdev/engine/table"
)

// HtpasswdMatches checks a password against one htpasswd hash; a format it
// does not know, and a bcrypt hash costlier than
// table.BasicAuthMaxBcryptCost, never match (table.BasicAuthHashSupported):
// the check is never run.
func HtpasswdMatches(hash, pass string) bool {
	if !table.BasicAuthHashSupported(hash) {
		return false
	}
	switch {
	case strings.HasPrefix(hash, "$2y$"), strings.HasPrefix(hash, "$2a$"), strings.HasPrefix(hash, "$2b$"):
		return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pass)) == nil
	case strings.HasPrefix(hash, "$apr1$"):
		salt, _, ok := strings.Cut(hash[len("$apr1$"):], "$")
		return ok && subtle.ConstantTimeCompare([]byte(apr1(pass, salt)), []byte(hash)) == 1
	case strings.HasPrefix(hash, "{SHA}"):
		sum := sha1.Sum([]byte(pass)) //nolint:gosec // the format's own hash
		return subtle.ConstantTimeCompare([]byte(base64.StdEncoding.EncodeToString(sum[:])), []byte(hash[len("{SHA}"):])) == 1
	case strings.HasPrefix(hash, "{PLAIN}"):
		return subtle.ConstantTimeCompare([]byte(pass), []byte(hash[len("{PLAIN}"):])) == 1
	}
	return false
}

// apr1 is Apache's MD5-based crypt ("$apr1$salt$hash", the algorithm of
// FreeBSD's MD5 crypt with Apache's magic), which htpasswd -m writes.
func apr1(pass, salt string) string {
	if len(salt) > 8 {
		salt = salt[:8]
	}
	const magic = "$apr1$"
	ctx := md5.New() //nolint:gosec // the format's own hash
	ctx.Write([]byte(pass + magic + salt))
	alt := md5.Sum([]byte(pass + salt + pass)) //nolint:gosec // the format's own hash
	for i := len(pass); i > 0; i -= 16 {
		ctx.Write(alt[:min(i, 16)])
	}
	for i := len(pass); i > 0; i >>= 1 {
		if i&1 != 0 {
			ctx.Write([]byte{0})
		} else {
			ctx.Write([]byte{pass[0]})
		}
	}
	final := ctx.Sum(nil)
	for i := range 1000 {
		c := md5.New() //nolint:gosec // the format's own hash
		if i&1 != 0 {
			c.Write([]byte(pass))
		} else {
			c.Write(final)
		}
		if i%3 != 0 {
			c.Write([]byte(salt))
		}
		if i%7 != 0 {
			c.Write([]byte(pass))
		}
		if i&1 != 0 {
			c.Write(final)
		} else {
			c.Write([]byte(pass))
		}
		final = c.Sum(nil)
	}
	const itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var out strings.Builder
	enc := func(a, b, c byte, n int) {
		v := uint(a)<<16 | uint(b)<<8 | uint(c)
		for ; n > 0; n-- {
			out.WriteByte(itoa64[v&0x3f])
			v >>= 6
		}
	}
	enc(final[0], final[6], final[12], 4)
	enc(final[1], final[7], final[13], 4)
	enc(final[2], final[8], final[14], 4)
	enc(final[3], final[9], final[15], 4)
	enc(final[4], final[10], final[5], 4)
	enc(0, 0, final[11], 2)
	return magic + salt + "$" + out.String()
}
