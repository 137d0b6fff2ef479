// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <json-c/json.h>

#include "agent/kubelet_pods.h"

/* A pod list of a full node (110 pods by default, a few KiB each) fits; a bigger answer is refused. */
#define BODY_MAX (64u << 20)
#define FETCH_TIMEOUT_S 5L

static const char *str_at(json_object *o, const char *a, const char *b)
{
	json_object *x, *y;

	if (!json_object_object_get_ex(o, a, &x) || !json_object_object_get_ex(x, b, &y) ||
	    !json_object_is_type(y, json_type_string))
		return NULL;
	return json_object_get_string(y);
}

int kubelet_pods_parse(const char *json, size_t len, struct kubelet_pods *pods, char *err, size_t err_sz)
{
	json_tokener *tok = json_tokener_new();
	json_object *root = NULL, *items;
	size_t n;
	int ret = -EINVAL;

	pods->pods = NULL;
	pods->nr = 0;
	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, json, (int)len);
	if (!root || !json_object_object_get_ex(root, "items", &items) || !json_object_is_type(items, json_type_array)) {
		snprintf(err, err_sz, "the kubelet's /pods is not a pod list (no \"items\" array)");
		goto cleanup;
	}
	n = json_object_array_length(items);
	pods->pods = calloc(n ? n : 1, sizeof(*pods->pods));
	if (!pods->pods) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *item = json_object_array_get_idx(items, i);
		const char *uid = str_at(item, "metadata", "uid"), *name = str_at(item, "metadata", "name"),
			   *ns = str_at(item, "metadata", "namespace");
		struct kubelet_pod *p = &pods->pods[pods->nr];

		/* A pod without its identity is of no use for labels: skipped, not an error. */
		if (!uid || !name || !ns || strlen(uid) != K8S_POD_UID_LEN)
			continue;
		snprintf(p->uid, sizeof(p->uid), "%s", uid);
		snprintf(p->name, sizeof(p->name), "%s", name);
		snprintf(p->namespace, sizeof(p->namespace), "%s", ns);
		pods->nr++;
	}
	ret = 0;
cleanup:
	json_object_put(root);
	json_tokener_free(tok);
	return ret;
}

const struct kubelet_pod *kubelet_pods_find(const struct kubelet_pods *pods, const char *uid)
{
	for (size_t i = 0; i < pods->nr; i++)
		if (!strcmp(pods->pods[i].uid, uid))
			return &pods->pods[i];
	return NULL;
}

void kubelet_pods_free(struct kubelet_pods *pods)
{
	free(pods->pods);
	pods->pods = NULL;
	pods->nr = 0;
}

struct body {
	char *data;
	size_t len;
	bool too_big;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	struct body *b = ctx;
	size_t n = size * nmemb;
	char *p;

	if (b->len + n > BODY_MAX) {
		b->too_big = true;
		return 0;
	}
	p = realloc(b->data, b->len + n + 1);
	if (!p)
		return 0;
	memcpy(p + b->len, ptr, n);
	b->data = p;
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/* "Authorization: Bearer <the token file's first line>". */
static struct curl_slist *auth_header(const char *token_file, char *err, size_t err_sz)
{
	char line[8192], hdr[8200];
	FILE *f = fopen(token_file, "re");
	size_t n;

	if (!f) {
		snprintf(err, err_sz, "cannot read the kubelet token %s: %s", token_file, strerror(errno));
		return NULL;
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	if (!n) {
		snprintf(err, err_sz, "the kubelet token %s is empty", token_file);
		return NULL;
	}
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", line);
	return curl_slist_append(NULL, hdr);
}

int kubelet_pods_fetch(const struct kubelet_client_opts *o, struct kubelet_pods *pods, char *err, size_t err_sz)
{
	struct curl_slist *hdrs = NULL;
	struct body b = {};
	struct kubelet_pods fresh;
	char url[1024], cerr[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURL *c;
	int ret = -EIO;

	if (o->token_file && !(hdrs = auth_header(o->token_file, err, err_sz)))
		return -EACCES;
	c = curl_easy_init();
	if (!c) {
		curl_slist_free_all(hdrs);
		return -ENOMEM;
	}
	snprintf(url, sizeof(url), "%s/pods", o->url);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, FETCH_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->ca_file && !strcmp(o->ca_file, "insecure")) {
		/* Kubelets commonly serve a self-signed certificate (what metrics-server's --kubelet-insecure-tls is for). */
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (o->ca_file) {
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	}
	if (curl_easy_perform(c) != CURLE_OK) {
		snprintf(err, err_sz, "kubelet %s: %s", url, b.too_big ? "answer too big" : cerr[0] ? cerr : "request failed");
		goto cleanup;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		snprintf(err, err_sz, "kubelet %s answered %ld%s", url, status,
			 status == 401 || status == 403 ? ": check the token and its RBAC (nodes/proxy or nodes/pods)" : "");
		ret = status == 401 || status == 403 ? -EACCES : -EIO;
		goto cleanup;
	}
	ret = kubelet_pods_parse(b.data ? b.data : "", b.len, &fresh, err, err_sz);
	if (!ret) {
		kubelet_pods_free(pods);
		*pods = fresh;
	}
cleanup:
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	free(b.data);
	return ret;
}
