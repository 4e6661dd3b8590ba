package app

import "testing"

func TestGraphEscaping(t *testing.T) {
	if got, want := dotString("a \"b\" \\c\nd"), `"a \"b\" \\c\nd"`; got != want {
		t.Errorf("dotString = %s, want %s", got, want)
	}
	if got, want := mermaidText(`x="1" <y>`+"\n"+"z"), "x=#quot;1#quot; #lt;y#gt;<br/>z"; got != want {
		t.Errorf("mermaidText = %s, want %s", got, want)
	}
}
