package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/paylink/paylink/client"
)

func TestClientCardTokens(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	card := client.Card{Number: "4111111111111111", ExpiryMonth: "07", ExpiryYear: year(env), CVC: "123", HolderName: "Jo Citizen"}

	tok, err := c.TokenizeCard(ctx, client.TokenizeRequest{Card: card, MultiUse: true, CustomerID: "cust-42"})
	if err != nil || tok.Card.Token == nil || len(*tok.Card.Token) != 128 || !tok.Card.MultiUse ||
		tok.Customer.ID == nil || *tok.Customer.ID != "cust-42" || tok.Card.Number != "411111******1111" {
		t.Fatalf("tokenize: got %+v, %v; want a multi-use token for cust-42", tok, err)
	}
	token := *tok.Card.Token

	rec, err := c.Card(ctx, token)
	if err != nil || rec.CardToken != token || !rec.MultiUse || rec.Card.ExpiryMonth != "07" ||
		rec.Card.HolderName != "Jo Citizen" || rec.Customer == nil || rec.Customer.ID != "cust-42" {
		t.Fatalf("look-up: got %+v, %v", rec, err)
	}

	pay := func() (*client.TransactionResult, error) {
		return c.Purchase(ctx, client.PurchaseRequest{
			Customer: buyer, Card: &client.Card{Token: token},
			Purchase: client.PurchaseDetails{Amount: "5", Currency: "AUD"},
		})
	}
	if res, err := pay(); err != nil || res.Purchase.Status != "APPROVED" {
		t.Fatalf("purchase with the token: got %+v, %v", res, err)
	}

	gone, err := c.InvalidateCard(ctx, token)
	if err != nil || gone.CardToken != token || gone.Card.Number != "411111******1111" || gone.ResponseCode != "success" {
		t.Fatalf("invalidate: got %+v, %v", gone, err)
	}
	invalid := func(what string, err error) {
		var e *client.Error
		if !errors.As(err, &e) || e.HTTPStatus != http.StatusConflict || !client.IsCode(err, "card_token_invalid") {
			t.Errorf("%s after invalidation: got %v, want 409 card_token_invalid", what, err)
		}
	}
	_, err = pay()
	invalid("purchase", err)
	_, err = c.Card(ctx, token)
	invalid("look-up", err)
	_, err = c.InvalidateCard(ctx, token)
	invalid("second invalidation", err)
	if _, err := c.Card(ctx, "unknown"); !client.IsCode(err, "not_found") {
		t.Errorf("look-up of an unknown token: got %v, want not_found", err)
	}

	single, err := c.TokenizeCard(ctx, client.TokenizeRequest{Card: card})
	if err != nil || single.Card.MultiUse || single.Customer.ID != nil {
		t.Fatalf("single-use tokenize: got %+v, %v", single, err)
	}
}
