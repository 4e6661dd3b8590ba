package watch

import (
	"fmt"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	apiextensionscel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/library"
)

// celBaseEnv is the CEL environment of the apiserver's stored expressions
// (k8s.io/apiserver/pkg/cel/environment, every version up to 1.34) minus its
// program options, which force runtime cost tracking on every evaluation.
// TestCELRulesCompile compiles every rule of every embedded CRD with it.
var celBaseEnv = sync.OnceValues(func() (*celgo.Env, error) {
	return celgo.NewEnv(
		celgo.HomogeneousAggregateLiterals(),
		celgo.EagerlyValidateDeclarations(true),
		celgo.DefaultUTCTimeZone(true),
		library.URLs(),
		library.Regex(),
		library.Lists(),
		library.Authz(),
		celgo.CrossTypeNumericComparisons(true),
		celgo.OptionalTypes(),
		library.Quantity(),
		celgo.ASTValidators(
			celgo.ValidateDurationLiterals(),
			celgo.ValidateTimestampLiterals(),
			celgo.ValidateRegexLiterals(),
			celgo.ValidateHomogeneousAggregateLiterals(),
		),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		library.IP(),
		library.CIDR(),
		library.Format(),
		ext.TwoVarComprehensions(),
		library.SemverLib(library.SemverVersion(1)),
		ext.Lists(ext.ListsVersion(3)),
	)
})

// celRuleEnv extends the base environment with self and oldSelf typed by
// the schema node the rules are attached to; oldSelf is an optional for
// rules with optionalOldSelf, as in the apiserver.
func celRuleEnv(declType *apiservercel.DeclType, typeName string, optionalOldSelf bool) (*celgo.Env, error) {
	base, err := celBaseEnv()
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	scoped := declType.MaybeAssignTypeName(typeName)
	provider := apiservercel.NewDeclTypeProvider(scoped)
	provider.SetRecognizeKeywordAsFieldName(true)
	providerOpts, err := provider.EnvOptions(base.CELTypeProvider())
	if err != nil {
		return nil, err
	}
	oldSelfType := scoped.CelType()
	if optionalOldSelf {
		oldSelfType = types.NewOptionalType(oldSelfType)
	}
	opts := append(providerOpts,
		celgo.Variable(apiextensionscel.ScopedVarName, scoped.CelType()),
		celgo.Variable(apiextensionscel.OldScopedVarName, oldSelfType),
	)
	return base.Extend(opts...)
}
