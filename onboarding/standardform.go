package onboarding

import (
	"regexp"
)

// The built-in form "standard" (docs/applicant-form.md): its catalog, and
// the patterns its fields use, compiled once.

// Patterns of the built-in form. compileFieldPattern returns them compiled
// once; other patterns (from form files) are compiled on use.
const (
	patternCountryCode = `^[A-Z]{2}$`
	patternWebURL      = `^https?://`

	msgCountryCode = "must be a two-letter country code in capitals, such as GB or IE"
)

var (
	countryCodePattern = regexp.MustCompile(patternCountryCode)
	webURLPattern      = regexp.MustCompile(patternWebURL)
)

// compileFieldPattern compiles a text field's Pattern.
func compileFieldPattern(p string) (*regexp.Regexp, error) {
	switch p {
	case patternCountryCode:
		return countryCodePattern, nil
	case patternWebURL:
		return webURLPattern, nil
	}
	return regexp.Compile(p)
}

// StandardForm returns the built-in form "standard". It is
// built on each call, so callers cannot affect one another.
func StandardForm() *Form {
	form, err := NewForm("standard", standardFields())
	if err != nil {
		panic("onboarding: the built-in form is invalid: " + err.Error())
	}
	return form
}

// standardFields is the catalog of the built-in form, in form order.
func standardFields() []Field {
	const (
		company      = "company"
		business     = "business"
		people       = "people"
		documents    = "documents"
		confirmation = "confirmation"
	)
	const phoneHelp = "International format, for example +44 20 7946 0958."
	return []Field{
		// Company.
		{
			ID: "company_name", Label: "Registered company name", Type: TypeText, Category: company, Required: true,
			Description: "The company's full legal name, exactly as it appears on the company register.",
		},
		{
			ID: "company_number", Label: "Company registration number", Type: TypeText, Category: company,
			Description: "The number the company registry issued, for example 12345678 in the UK or 123456 in Ireland.",
		},
		{
			ID: "company_country", Label: "Country of incorporation", Type: TypeText, Category: company,
			Pattern: patternCountryCode, PatternMessage: msgCountryCode,
			Description: "The country whose register the company is on.",
		},
		{
			ID: "company_type", Label: "Company type", Type: TypeSelect, Category: company,
			Options: []Option{
				{"private_limited", "Private limited company"},
				{"public_limited", "Public limited company"},
				{"llp", "Limited liability partnership"},
				{"partnership", "Partnership"},
				{"sole_trader", "Sole trader"},
				{"charity", "Charity"},
				{"other", "Other"},
			},
		},
		{
			ID: "incorporation_date", Label: "Date of incorporation", Type: TypeDate, Category: company,
			Rule:        fieldRuleNotFuture,
			Description: "The date on the certificate of incorporation. For example, 16 4 2018.",
		},
		{
			ID: "registered_address", Label: "Registered office address", Type: TypeAddress, Category: company, Required: true,
			Description: "The official address on the company register.",
		},
		{
			ID: "trading_address", Label: "Trading address", Type: TypeAddress, Category: company,
			Description: "Where the business operates day to day, if different from the registered office.",
		},
		{
			ID: "industry", Label: "Industry", Type: TypeSelect, Category: company, Required: true,
			Options: []Option{
				{"software", "Software"},
				{"financial_services", "Financial services"},
				{"retail", "Retail"},
				{"e_commerce", "E-commerce"},
				{"professional_services", "Professional services"},
				{"manufacturing", "Manufacturing"},
				{"hospitality", "Hospitality"},
				{"healthcare", "Healthcare"},
				{"construction", "Construction"},
				{"transport", "Transport and logistics"},
				{"other", "Other"},
			},
		},
		{
			ID: "website", Label: "Website", Type: TypeText, Category: company,
			Pattern: patternWebURL, PatternMessage: "must start with https:// or http://, for example https://example.com",
			Description: "The full address, starting with https:// or http://, for example https://example.com.",
		},
		{
			ID: "phone", Label: "Company phone number", Type: TypePhone, Category: company,
			Description: phoneHelp,
		},

		// Business.
		{
			ID: "business_description", Label: "What the business does", Type: TypeText, Category: business, Required: true,
			MaxLength:   2000,
			Description: "Describe your products or services, your customers and how you sell to them. At most 2,000 characters.",
		},
		{
			ID: "countries_of_operation", Label: "Countries of operation", Type: TypeMultiSelect, Category: business,
			Description: "Every country where the business has customers, staff or operations.",
			Options: []Option{
				{"GB", "United Kingdom"},
				{"IE", "Ireland"},
				{"FR", "France"},
				{"DE", "Germany"},
				{"ES", "Spain"},
				{"IT", "Italy"},
				{"NL", "Netherlands"},
				{"US", "United States"},
				{"OTHER", "Other countries"},
			},
		},
		{
			ID: "annual_turnover", Label: "Annual turnover", Type: TypeCurrency, Category: business,
			Description: "Revenue over the last 12 months, or the expected revenue for the first year, in GBP, EUR or USD.",
		},
		{
			ID: "expected_monthly_volume", Label: "Expected monthly payment volume", Type: TypeCurrency, Category: business,
			Description: "The total value of the payments you expect to process each month, in GBP, EUR or USD.",
		},
		{
			ID: "high_risk_revenue_percentage", Label: "Share of revenue from high-risk activities (%)", Type: TypePercentage, Category: business,
			Description: "From 0 to 100: the part of your revenue from activities such as gambling, crypto-assets, adult content or weapons.",
		},
		{
			ID: "regulated_entity", Label: "Regulated by a financial services authority", Type: TypeBoolean, Category: business,
			Description: "Whether the company is authorised or registered by a financial regulator, such as the FCA or the Central Bank of Ireland.",
		},
		{
			ID: "tax_id", Label: "Tax identification number", Type: TypeText, Category: business, Sensitive: true,
			Description: "For example the company's VAT number or Corporation Tax reference.",
		},
		{
			ID: "bank_account_iban", Label: "Business bank account (IBAN)", Type: TypeText, Category: business, Sensitive: true,
			Rule:        fieldRuleIBAN,
			Description: "The International Bank Account Number of the company's own account, for example GB82 WEST 1234 5698 7654 32. Spaces are optional.",
		},

		// People: collected per director, beneficial owner and shareholder.
		{
			ID: "person_full_name", Label: "Full legal name", Type: TypeText, Category: people, PersonScoped: true,
			Description: "As shown on the person's passport or identity card.",
		},
		{
			ID: "person_date_of_birth", Label: "Date of birth", Type: TypeDate, Category: people, PersonScoped: true,
			Rule: fieldRuleNotFuture, Description: "For example, 27 3 1985.",
		},
		{
			ID: "person_nationality", Label: "Nationality", Type: TypeText, Category: people, PersonScoped: true,
			Pattern: patternCountryCode, PatternMessage: msgCountryCode,
			Description: "The country of the person's passport or identity card.",
		},
		{
			ID: "person_home_address", Label: "Home address", Type: TypeAddress, Category: people, PersonScoped: true,
			Description: "The person's residential address, not the company's.",
		},
		{
			ID: "person_email", Label: "Email address", Type: TypeText, Category: people, PersonScoped: true,
		},
		{
			ID: "person_phone", Label: "Phone number", Type: TypePhone, Category: people, PersonScoped: true,
			Description: phoneHelp,
		},

		// Documents.
		{
			ID: "certificate_of_incorporation", Label: "Certificate of incorporation", Type: TypeDocument, Category: documents, Required: true,
			Description: "The certificate issued by the company registry, as a PDF or a clear photo.",
		},
		{
			ID: "proof_of_address", Label: "Proof of business address", Type: TypeDocument, Category: documents, Required: true,
			Description: "A utility bill, bank statement or lease from the last 3 months showing the company's name and address.",
		},
		{
			ID: "bank_statement", Label: "Business bank statement", Type: TypeDocument, Category: documents,
			Description: "A recent statement of the company's bank account, showing the account name and number.",
		},
		{
			ID: "person_id_document", Label: "Identity document", Type: TypeDocument, Category: documents, Required: true,
			PersonScoped: true, RequiredFor: []PersonRole{PersonDirector, PersonUBO},
			Description: "A passport or national identity card, for each director and beneficial owner.",
		},

		// Confirmation.
		{
			ID: "confirm_accuracy", Label: "I confirm that the information I have given is accurate and complete", Type: TypeBoolean,
			Category: confirmation, Required: true, Confirmation: true,
		},
		{
			ID: "confirm_terms", Label: "I accept the terms and conditions", Type: TypeBoolean,
			Category: confirmation, Required: true, Confirmation: true, Terms: true,
		},
	}
}
