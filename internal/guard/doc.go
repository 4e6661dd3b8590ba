// Package guard holds no code: its test keeps facts with their owners. It
// greps the source of the main packages for the patterns of a fact
// re-derived outside its owner (a list of which conditions are bad, a route
// kind compared by name, a message or a trace's text or name parsed) and
// fails on any new one; the files allowed to hold them are listed with why.
package guard
